/**
 * The accounts repository on every backend: the team (memberships, the last-owner rule under concurrency,
 * invitations used once) and the partner portal's storage (one-time sign-in links and partner sessions).
 */
import { createAccountsRepository } from "../../services/accounts/storage";
import type { AccountsRepository } from "../../services/accounts/repository";
import { at, backends, counter, DAY, SECOND, useRepository } from "./harness";

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

  describe("the team: members and roles", () => {
    const nextUser = counter(1);
    const user = async (name = "Member") => (await repo().createUser({ email: `team-${process.pid}-${nextUser()}@example.com`, name, passwordHash: "hash" }))!;
    const owners = async (workspaceId: number) => (await repo().listWorkspaceMembers(workspaceId)).filter((m) => m.role === "owner").map((m) => m.userId);

    it("adds members once and lists them with their users' names and emails, oldest first", async () => {
      const ws = await repo().createWorkspace("Team");
      const [a, b] = [await user("Ann"), await user("Bob")];
      expect(await repo().addMembership({ workspaceId: ws.id, userId: a.id, role: "owner" })).toEqual({ workspaceId: ws.id, userId: a.id, role: "owner", createdAt: expect.any(Date) });
      await repo().addMembership({ workspaceId: ws.id, userId: b.id, role: "viewer" });
      // A member already: nothing changes.
      expect(await repo().addMembership({ workspaceId: ws.id, userId: b.id, role: "admin" })).toBeNull();
      expect(await repo().listWorkspaceMembers(ws.id)).toEqual([
        { userId: a.id, email: a.email, name: "Ann", role: "owner", joinedAt: expect.any(Date) },
        { userId: b.id, email: b.email, name: "Bob", role: "viewer", joinedAt: expect.any(Date) },
      ]);
      expect(await repo().listWorkspaceMembers((await repo().createWorkspace("Empty")).id)).toEqual([]);
    });

    it("changes roles, but never the last owner's", async () => {
      const ws = await repo().createWorkspace("Roles");
      const [a, b] = [await user(), await user()];
      await repo().addMembership({ workspaceId: ws.id, userId: a.id, role: "owner" });
      await repo().addMembership({ workspaceId: ws.id, userId: b.id, role: "viewer" });
      expect(await repo().changeRole({ workspaceId: ws.id, userId: a.id, role: "admin" })).toEqual({ outcome: "last_owner" });
      expect(await repo().changeRole({ workspaceId: ws.id, userId: (await user()).id, role: "admin" })).toEqual({ outcome: "not_member" });
      expect(await repo().changeRole({ workspaceId: ws.id + 1000, userId: a.id, role: "admin" })).toEqual({ outcome: "not_member" });
      // An owner staying owner is no demotion.
      expect(await repo().changeRole({ workspaceId: ws.id, userId: a.id, role: "owner" })).toMatchObject({ outcome: "done", value: { role: "owner" } });
      expect(await repo().changeRole({ workspaceId: ws.id, userId: b.id, role: "owner" })).toEqual({
        outcome: "done",
        value: { workspaceId: ws.id, userId: b.id, role: "owner", createdAt: expect.any(Date) },
      });
      expect(await repo().changeRole({ workspaceId: ws.id, userId: a.id, role: "developer" })).toMatchObject({ outcome: "done", value: { role: "developer" } });
      expect(await owners(ws.id)).toEqual([b.id]);
      expect((await repo().findMembership(ws.id, a.id))!.role).toBe("developer");
    });

    it("removes members, but never the last owner", async () => {
      const ws = await repo().createWorkspace("Removals");
      const [a, b, c] = [await user(), await user(), await user()];
      await repo().addMembership({ workspaceId: ws.id, userId: a.id, role: "owner" });
      await repo().addMembership({ workspaceId: ws.id, userId: b.id, role: "viewer" });
      expect(await repo().removeMembership(ws.id, a.id)).toEqual({ outcome: "last_owner" });
      expect(await repo().removeMembership(ws.id, c.id)).toEqual({ outcome: "not_member" });
      expect(await repo().removeMembership(ws.id, b.id)).toMatchObject({ outcome: "done", value: { userId: b.id, role: "viewer" } });
      expect(await repo().findMembership(ws.id, b.id)).toBeNull();
      expect(await repo().removeMembership(ws.id, b.id)).toEqual({ outcome: "not_member" });
      // Another owner: the first may go.
      await repo().addMembership({ workspaceId: ws.id, userId: c.id, role: "owner" });
      expect(await repo().removeMembership(ws.id, a.id)).toMatchObject({ outcome: "done", value: { role: "owner" } });
      expect(await owners(ws.id)).toEqual([c.id]);
    });

    it("two owners demoted or removed at once: one change wins, one owner stays", async () => {
      for (let round = 0; round < 4; round++) {
        const ws = await repo().createWorkspace(`Race ${round}`);
        const [a, b] = [await user(), await user()];
        await repo().addMembership({ workspaceId: ws.id, userId: a.id, role: "owner" });
        await repo().addMembership({ workspaceId: ws.id, userId: b.id, role: "owner" });
        const results =
          round % 2 === 0
            ? await Promise.all([repo().changeRole({ workspaceId: ws.id, userId: a.id, role: "viewer" }), repo().changeRole({ workspaceId: ws.id, userId: b.id, role: "viewer" })])
            : await Promise.all([repo().removeMembership(ws.id, a.id), repo().changeRole({ workspaceId: ws.id, userId: b.id, role: "admin" })]);
        expect(results.map((r) => r.outcome).sort()).toEqual(["done", "last_owner"]);
        expect(await owners(ws.id)).toHaveLength(1);
      }
    });
  });

  describe("the team: invitations", () => {
    const nextEmail = counter(1);
    const email = () => `invitee-${process.pid}-${nextEmail()}@example.com`;
    const invite = (workspaceId: number, to: string, o: { role?: "owner" | "admin" | "developer" | "viewer" | "billing"; hash?: string; expiresAt?: Date; now?: Date } = {}) =>
      repo().createInvitation({ workspaceId, email: to, role: o.role ?? "viewer", tokenHash: o.hash ?? tokenHash(), invitedBy: null, expiresAt: o.expiresAt ?? at(DAY), now: o.now ?? at() });
    const created = async (p: ReturnType<typeof invite>) => {
      const r = await p;
      if (r.outcome !== "created") throw new Error(`not created: ${r.outcome}`);
      return r;
    };

    it("stores an invitation (its token hashed) and finds it by the hash; an unknown workspace is refused", async () => {
      const ws = await repo().createWorkspace("Invites");
      const to = email();
      const hash = tokenHash();
      const { invitation, replaced } = await created(invite(ws.id, to, { hash, role: "developer" }));
      expect(replaced).toBe(false);
      expect(invitation).toEqual({
        id: expect.any(Number),
        workspaceId: ws.id,
        email: to,
        role: "developer",
        tokenHash: hash,
        invitedBy: null,
        createdAt: at(),
        expiresAt: at(DAY),
        acceptedAt: null,
        acceptedBy: null,
        revokedAt: null,
      });
      expect(await repo().findInvitationByToken(hash)).toEqual(invitation);
      expect(await repo().findInvitationByToken(tokenHash())).toBeNull();
      expect(await repo().listOpenInvitations(ws.id)).toEqual([invitation]);
      expect(await invite(ws.id + 1000, email())).toEqual({ outcome: "no_workspace" });
    });

    it("inviting an email again replaces its open invitation; a member's email is refused", async () => {
      const ws = await repo().createWorkspace("Reinvites");
      const to = email();
      const first = await created(invite(ws.id, to, { now: at() }));
      const other = await created(invite(ws.id, email(), { now: at(SECOND) }));
      const second = await created(invite(ws.id, to, { role: "admin", now: at(2 * SECOND) }));
      expect(second.replaced).toBe(true);
      expect((await repo().findInvitationByToken(first.invitation.tokenHash))!.revokedAt).toEqual(at(2 * SECOND));
      expect(await repo().listOpenInvitations(ws.id)).toEqual([second.invitation, other.invitation]);

      const member = (await repo().createUser({ email: email(), name: "Member", passwordHash: "hash" }))!;
      await repo().addMembership({ workspaceId: ws.id, userId: member.id, role: "viewer" });
      expect(await invite(ws.id, member.email)).toEqual({ outcome: "already_member" });
      // In another workspace, the same email is invited alone.
      expect((await created(invite((await repo().createWorkspace("Elsewhere")).id, member.email))).replaced).toBe(false);
    });

    it("re-invitations of one email at once leave exactly one open invitation", async () => {
      const ws = await repo().createWorkspace("Concurrent invites");
      const to = email();
      const results = await Promise.all(Array.from({ length: 4 }, () => invite(ws.id, to)));
      expect(results.every((r) => r.outcome === "created")).toBe(true);
      expect(await repo().listOpenInvitations(ws.id)).toHaveLength(1);
    });

    it("revokes an open invitation once, in its own workspace only", async () => {
      const ws = await repo().createWorkspace("Revocations");
      const { invitation } = await created(invite(ws.id, email()));
      expect(await repo().revokeInvitation(ws.id + 1000, invitation.id, at(SECOND))).toBeNull();
      expect(await repo().revokeInvitation(ws.id, invitation.id, at(SECOND))).toEqual({ ...invitation, revokedAt: at(SECOND) });
      expect(await repo().revokeInvitation(ws.id, invitation.id, at(2 * SECOND))).toBeNull();
      expect(await repo().listOpenInvitations(ws.id)).toEqual([]);
      expect(await repo().acceptInvitation({ tokenHash: invitation.tokenHash, now: at(3 * SECOND), newUser: { name: "Late", passwordHash: "hash" } })).toEqual({ outcome: "unusable" });
    });

    it("accepts once with a new account: the user and the membership with the invitation's role", async () => {
      const ws = await repo().createWorkspace("Accept new");
      const to = email();
      const { invitation } = await created(invite(ws.id, to, { role: "developer" }));
      const result = await repo().acceptInvitation({ tokenHash: invitation.tokenHash, now: at(MINUTE), newUser: { name: "New", passwordHash: "new-hash" } });
      if (result.outcome !== "accepted") throw new Error(result.outcome);
      expect(result.user).toEqual({ id: expect.any(Number), email: to, name: "New", passwordHash: "new-hash", createdAt: expect.any(Date) });
      expect(result.membership).toMatchObject({ workspaceId: ws.id, userId: result.user.id, role: "developer" });
      expect(result).toMatchObject({ userCreated: true, alreadyMember: false, invitation: { ...invitation, acceptedAt: at(MINUTE), acceptedBy: result.user.id } });
      expect(await repo().findUserByEmail(to)).toEqual(result.user);
      expect(await repo().findInvitationByToken(invitation.tokenHash)).toEqual({ ...invitation, acceptedAt: at(MINUTE), acceptedBy: result.user.id });
      expect(await repo().listOpenInvitations(ws.id)).toEqual([]);
      // Single use.
      expect(await repo().acceptInvitation({ tokenHash: invitation.tokenHash, now: at(2 * MINUTE) })).toEqual({ outcome: "unusable" });
    });

    it("accepts with an existing account; a member already keeps their role", async () => {
      const ws = await repo().createWorkspace("Accept existing");
      const existing = (await repo().createUser({ email: email(), name: "Existing", passwordHash: "old-hash" }))!;
      const { invitation } = await created(invite(ws.id, existing.email, { role: "billing" }));
      // Not a new account for this email: nothing changes, the token stays usable.
      expect(await repo().acceptInvitation({ tokenHash: invitation.tokenHash, now: at(MINUTE), newUser: { name: "Other", passwordHash: "new-hash" } })).toEqual({ outcome: "email_taken" });
      expect((await repo().findUserByEmail(existing.email))!.passwordHash).toBe("old-hash");
      const result = await repo().acceptInvitation({ tokenHash: invitation.tokenHash, now: at(MINUTE) });
      expect(result).toMatchObject({ outcome: "accepted", userCreated: false, alreadyMember: false, user: existing, membership: { userId: existing.id, role: "billing" } });

      // Invited again (an open invitation of a member's email made before they joined): accepting keeps the role.
      const ws2 = await repo().createWorkspace("Accept member");
      const second = await created(invite(ws2.id, existing.email, { role: "viewer" }));
      await repo().addMembership({ workspaceId: ws2.id, userId: existing.id, role: "owner" });
      expect(await repo().acceptInvitation({ tokenHash: second.invitation.tokenHash, now: at(MINUTE) })).toMatchObject({
        outcome: "accepted",
        alreadyMember: true,
        membership: { role: "owner" },
      });
    });

    it("refuses without changing anything: expired (at its expiry instant too), unknown, or a new email without a new account", async () => {
      const ws = await repo().createWorkspace("Refusals");
      const to = email();
      const { invitation } = await created(invite(ws.id, to, { expiresAt: at(DAY) }));
      const newUser = { name: "New", passwordHash: "hash" };
      expect(await repo().acceptInvitation({ tokenHash: invitation.tokenHash, now: at(DAY), newUser })).toEqual({ outcome: "unusable" });
      expect(await repo().acceptInvitation({ tokenHash: tokenHash(), now: at(), newUser })).toEqual({ outcome: "unusable" });
      expect(await repo().acceptInvitation({ tokenHash: invitation.tokenHash, now: at(MINUTE) })).toEqual({ outcome: "needs_account" });
      expect(await repo().findUserByEmail(to)).toBeNull();
      expect(await repo().listWorkspaceMembers(ws.id)).toEqual([]);
      expect(await repo().findInvitationByToken(invitation.tokenHash)).toEqual(invitation);
    });

    it("gives one token to exactly one of many concurrent acceptances", async () => {
      const ws = await repo().createWorkspace("Concurrent accepts");
      const { invitation } = await created(invite(ws.id, email()));
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => repo().acceptInvitation({ tokenHash: invitation.tokenHash, now: at(MINUTE), newUser: { name: `Racer ${i}`, passwordHash: "hash" } })),
      );
      expect(results.filter((r) => r.outcome === "accepted")).toHaveLength(1);
      expect(results.filter((r) => r.outcome !== "accepted").map((r) => r.outcome)).toEqual(Array(5).fill("unusable"));
      expect(await repo().listWorkspaceMembers(ws.id)).toHaveLength(1);
    });
  });

  describe("partners' address hashes of a day (docs/fraud.md)", () => {
    it("notes each hash of a day once, lists a day's, and forgets days older than a week", async () => {
      const partnerId = 9001;
      const day = (n: number) => new Date(Date.UTC(2026, 5, 1 + n));
      await repo().notePartnerAddress(partnerId, "2026-06-01", "h-old", day(0));
      await repo().notePartnerAddress(partnerId, "2026-06-10", "h-b", day(9));
      await repo().notePartnerAddress(partnerId, "2026-06-10", "h-a", day(9));
      await repo().notePartnerAddress(partnerId, "2026-06-10", "h-a", day(9));
      expect(await repo().partnerAddressHashes(partnerId, "2026-06-10")).toEqual(["h-a", "h-b"]);
      expect(await repo().partnerAddressHashes(partnerId + 1, "2026-06-10")).toEqual([]);
      // SQL removes the old day when a newer one is noted; MongoDB's TTL index removes it in the background.
      if (backend.name !== "mongo") expect(await repo().partnerAddressHashes(partnerId, "2026-06-01")).toEqual([]);
    });
  });

  describe("embed tokens (docs/embedded-referrals.md)", () => {
    it("stores a token by its hash and finds it again, expired or not, until a day past its expiry", async () => {
      const hash = tokenHash();
      const token = await repo().createEmbedToken({ partnerId: 8, programId: 3, tokenHash: hash, expiresAt: at(10 * MINUTE), now: at() });
      expect(token).toEqual({ id: expect.any(Number), partnerId: 8, programId: 3, tokenHash: hash, createdAt: at(), expiresAt: at(10 * MINUTE) });
      expect(await repo().findEmbedToken(hash)).toEqual(token);
      // Reusable: finding it does not use it up.
      expect(await repo().findEmbedToken(hash)).toEqual(token);
      expect(await repo().findEmbedToken(tokenHash())).toBeNull();
      // Another token made two days later sweeps it (SQL); MongoDB's TTL index does it in the background.
      await repo().createEmbedToken({ partnerId: 8, programId: 3, tokenHash: tokenHash(), expiresAt: at(2 * 24 * 60 * MINUTE + 10 * MINUTE), now: at(2 * 24 * 60 * MINUTE) });
      if (backend.name !== "mongo") expect(await repo().findEmbedToken(hash)).toBeNull();
    });

    it("refuses a second token with the same hash", async () => {
      const hash = tokenHash();
      await repo().createEmbedToken({ partnerId: 8, programId: 3, tokenHash: hash, expiresAt: at(10 * MINUTE), now: at() });
      await expect(repo().createEmbedToken({ partnerId: 9, programId: 3, tokenHash: hash, expiresAt: at(10 * MINUTE), now: at() })).rejects.toThrow();
    });
  });

  describe("partner sessions", () => {
    it("creates, finds, touches and deletes a session", async () => {
      const hash = tokenHash();
      const session = await repo().createPartnerSession({ partnerId: 5, tokenHash: hash, expiresAt: at(7 * 24 * 60 * MINUTE), now: at() });
      expect(session).toEqual({ id: expect.any(Number), partnerId: 5, tokenHash: hash, createdAt: at(), lastSeenAt: at(), expiresAt: at(7 * 24 * 60 * MINUTE), programId: null });
      expect(await repo().findPartnerSession(hash)).toEqual(session);

      await repo().touchPartnerSession(session.id, at(5 * MINUTE));
      expect((await repo().findPartnerSession(hash))!.lastSeenAt).toEqual(at(5 * MINUTE));

      await repo().deletePartnerSession(hash);
      expect(await repo().findPartnerSession(hash)).toBeNull();
    });

    it("binds an embedded session to its program", async () => {
      const hash = tokenHash();
      const session = await repo().createPartnerSession({ partnerId: 7, tokenHash: hash, expiresAt: at(60 * MINUTE), now: at(), programId: 12 });
      expect(session.programId).toBe(12);
      expect(await repo().findPartnerSession(hash)).toEqual(session);
    });

    it("keeps partner sessions apart from dashboard sessions", async () => {
      const hash = tokenHash();
      await repo().createPartnerSession({ partnerId: 6, tokenHash: hash, expiresAt: at(MINUTE), now: at() });
      expect(await repo().findSession(hash)).toBeNull();
    });
  });
});
