/** The accounts repository's partner portal storage: one-time sign-in links and partner sessions, on every backend. */
import { createAccountsRepository } from "../../services/accounts/storage";
import type { AccountsRepository } from "../../services/accounts/repository";
import { at, backends, counter, SECOND, useRepository } from "./harness";

const nextToken = counter(1);
const tokenHash = () => `hash-${process.pid}-${nextToken()}`.padEnd(64, "0");
const MINUTE = 60 * SECOND;

describe.each(backends)("accounts repository contract on %s", (_name, backend) => {
  const repo = useRepository<AccountsRepository>(backend, createAccountsRepository);

  describe("partner sign-in links", () => {
    it("round-trips a link and consumes it once, before it expires", async () => {
      const hash = tokenHash();
      const link = await repo().createPartnerSignInLink({ partnerId: 3, tokenHash: hash, expiresAt: at(15 * MINUTE), now: at() });
      expect(link).toEqual({ id: expect.any(Number), partnerId: 3, tokenHash: hash, createdAt: at(), expiresAt: at(15 * MINUTE), usedAt: null });

      expect(await repo().consumePartnerSignInLink(hash, at(MINUTE))).toEqual({ ...link, usedAt: at(MINUTE) });
      expect(await repo().consumePartnerSignInLink(hash, at(2 * MINUTE))).toBeNull();
    });

    it("refuses an expired link (at its expiry instant too) and an unknown one", async () => {
      const hash = tokenHash();
      await repo().createPartnerSignInLink({ partnerId: 3, tokenHash: hash, expiresAt: at(15 * MINUTE), now: at() });
      expect(await repo().consumePartnerSignInLink(hash, at(15 * MINUTE))).toBeNull();
      expect(await repo().consumePartnerSignInLink(hash, at(16 * MINUTE))).toBeNull();
      expect(await repo().consumePartnerSignInLink(tokenHash(), at())).toBeNull();
      // Before its expiry the same link still works: the refusals above did not use it up.
      expect(await repo().consumePartnerSignInLink(hash, at(MINUTE))).not.toBeNull();
    });

    it("gives a link to exactly one of many concurrent consumers", async () => {
      const hash = tokenHash();
      await repo().createPartnerSignInLink({ partnerId: 4, tokenHash: hash, expiresAt: at(15 * MINUTE), now: at() });
      const results = await Promise.all(Array.from({ length: 8 }, () => repo().consumePartnerSignInLink(hash, at(MINUTE))));
      expect(results.filter((r) => r !== null)).toHaveLength(1);
    });
  });

  describe("partner sessions", () => {
    it("creates, finds, touches and deletes a session", async () => {
      const hash = tokenHash();
      const session = await repo().createPartnerSession({ partnerId: 5, tokenHash: hash, expiresAt: at(7 * 24 * 60 * MINUTE), now: at() });
      expect(session).toEqual({ id: expect.any(Number), partnerId: 5, tokenHash: hash, createdAt: at(), lastSeenAt: at(), expiresAt: at(7 * 24 * 60 * MINUTE) });
      expect(await repo().findPartnerSession(hash)).toEqual(session);

      await repo().touchPartnerSession(session.id, at(5 * MINUTE));
      expect((await repo().findPartnerSession(hash))!.lastSeenAt).toEqual(at(5 * MINUTE));

      await repo().deletePartnerSession(hash);
      expect(await repo().findPartnerSession(hash)).toBeNull();
    });

    it("keeps partner sessions apart from dashboard sessions", async () => {
      const hash = tokenHash();
      await repo().createPartnerSession({ partnerId: 6, tokenHash: hash, expiresAt: at(MINUTE), now: at() });
      expect(await repo().findSession(hash)).toBeNull();
    });
  });
});
