import { createProgramsRepository } from "../../services/programs/storage";
import type { NewProgram, ProgramsRepository } from "../../services/programs/repository";
import { at, backends, counter, DAY, useRepository } from "./harness";

const unique = counter();

const percentageProgram = (): NewProgram => ({
  workspaceId: 42,
  name: `Percentage program ${unique()}`,
  currency: "eur",
  commissionRule: { type: "percentage", basisPoints: 1250 },
  holdDays: 14,
  recurringCommissionMonths: 12,
  testMode: true,
  selfReferralGuard: false,
  paymentTrackingMode: "s2s",
  allowedOrigins: ["https://shop.example", "https://www.shop.example"],
  cookieWindowDays: 30,
  defaultLandingUrl: "https://shop.example/pricing",
});

const flatProgram = (): NewProgram => ({
  workspaceId: null,
  name: `Flat program ${unique()}`,
  currency: "jpy",
  commissionRule: { type: "flat", amountCents: 500 },
  holdDays: 0,
  recurringCommissionMonths: null,
  testMode: false,
  selfReferralGuard: true,
  paymentTrackingMode: "processor_connect",
  allowedOrigins: [],
});

describe.each(backends)("programs repository contract on %s", (_name, backend) => {
  const repo = useRepository<ProgramsRepository>(backend, createProgramsRepository);

  describe("programs", () => {
    it.each([
      ["a percentage rule", percentageProgram],
      ["a flat rule", flatProgram],
    ])("round-trips every field of a program with %s", async (_rule, make) => {
      const input = make();
      const created = await repo().createProgram(input);

      expect(Number.isInteger(created.id)).toBe(true);
      expect(created).toEqual({
        // Left out (the flat program): the defaults.
        cookieWindowDays: 90,
        defaultLandingUrl: null,
        ...input,
        id: created.id,
        processor: {
          connectionStatus: "not_connected",
          accountId: null,
          chargesEnabled: false,
          payoutsEnabled: false,
          detailsSubmitted: false,
          connectedAt: null,
        },
        createdAt: expect.any(Date),
      });
      expect(await repo().getProgram(created.id)).toEqual(created);
    });

    it("gives each program its own integer id and returns null for an unknown one", async () => {
      const a = await repo().createProgram(percentageProgram());
      const b = await repo().createProgram(flatProgram());
      expect(Number.isInteger(a.id) && Number.isInteger(b.id)).toBe(true);
      expect(a.id).not.toBe(b.id);
      expect((await repo().getProgram(a.id))?.commissionRule).toEqual({ type: "percentage", basisPoints: 1250 });
      expect((await repo().getProgram(b.id))?.commissionRule).toEqual({ type: "flat", amountCents: 500 });
      expect(await repo().getProgram(987_654)).toBeNull();
    });
  });

  describe("processor connection", () => {
    it("changes only the fields given and keeps the rest", async () => {
      const program = await repo().createProgram(percentageProgram());
      const accountId = `acct_${unique()}`;

      const connected = await repo().updateProcessorConnection(program.id, { connectionStatus: "connected", accountId, connectedAt: at(0) });
      expect(connected).toEqual({
        ...program,
        processor: { ...program.processor, connectionStatus: "connected", accountId, connectedAt: at(0) },
      });

      const enabled = await repo().updateProcessorConnection(program.id, { chargesEnabled: true, payoutsEnabled: true, detailsSubmitted: true });
      expect(enabled?.processor).toEqual({
        connectionStatus: "connected",
        accountId,
        chargesEnabled: true,
        payoutsEnabled: true,
        detailsSubmitted: true,
        connectedAt: at(0),
      });
      expect(await repo().getProgram(program.id)).toEqual(enabled);
      expect(await repo().findProgramByProcessorAccount(accountId)).toEqual(enabled);
      expect(await repo().findProgramByProcessorAccount("acct_nobody")).toBeNull();

      const disconnected = await repo().updateProcessorConnection(program.id, { connectionStatus: "disconnected", accountId: null, chargesEnabled: false });
      expect(disconnected?.processor).toMatchObject({ connectionStatus: "disconnected", accountId: null, chargesEnabled: false, payoutsEnabled: true });
      expect({ ...disconnected, processor: undefined }).toEqual({ ...program, processor: undefined });
    });

    it("returns the program unchanged for an empty patch, and null for an unknown program", async () => {
      const program = await repo().createProgram(flatProgram());
      expect(await repo().updateProcessorConnection(program.id, {})).toEqual(program);
      expect(await repo().updateProcessorConnection(987_654, { connectionStatus: "connected" })).toBeNull();
    });
  });

  describe("settings", () => {
    it("changes only the settings given, in one write, and keeps the rest", async () => {
      const program = await repo().createProgram(percentageProgram());
      const patch = {
        name: "Renamed",
        currency: "usd",
        holdDays: 7,
        cookieWindowDays: 60,
        defaultLandingUrl: "https://shop.example/welcome",
        allowedOrigins: ["https://a.example"],
      };
      const updated = await repo().updateProgramSettings(program.id, patch);
      expect(updated).toEqual({ ...program, ...patch });
      expect(await repo().getProgram(program.id)).toEqual(updated);

      const partly = await repo().updateProgramSettings(program.id, { name: "Again", defaultLandingUrl: null, allowedOrigins: [], holdDays: undefined });
      expect(partly).toEqual({ ...updated, name: "Again", defaultLandingUrl: null, allowedOrigins: [] });
    });

    it("returns the program unchanged for an empty patch, and null for an unknown program", async () => {
      const program = await repo().createProgram(flatProgram());
      expect(await repo().updateProgramSettings(program.id, {})).toEqual(program);
      expect(await repo().updateProgramSettings(987_654, { name: "Nobody" })).toBeNull();
    });
  });

  describe("api keys", () => {
    it("creates a key and finds it by its prefix", async () => {
      const program = await repo().createProgram(percentageProgram());
      const prefix = `pk_${unique()}_find`;
      const key = await repo().createApiKey({ programId: program.id, prefix, secretHash: "hash-of-secret" });

      expect(Number.isInteger(key.id)).toBe(true);
      expect(key).toEqual({
        id: key.id,
        programId: program.id,
        name: null,
        prefix,
        secretHash: "hash-of-secret",
        createdAt: expect.any(Date),
        lastUsedAt: null,
        retiredAt: null,
      });
      expect(await repo().findApiKeyByPrefix(prefix)).toEqual(key);
      expect(await repo().findApiKeyByPrefix(`${prefix}_unknown`)).toBeNull();
    });

    it("keeps a key's name, and lists a program's keys newest first, retired ones included", async () => {
      const program = await repo().createProgram(percentageProgram());
      const other = await repo().createProgram(percentageProgram());
      const first = await repo().createApiKey({ programId: program.id, prefix: `pk_${unique()}_list`, secretHash: "h1", name: "Production" });
      const second = await repo().createApiKey({ programId: program.id, prefix: `pk_${unique()}_list`, secretHash: "h2", name: null });
      await repo().createApiKey({ programId: other.id, prefix: `pk_${unique()}_list`, secretHash: "h3", name: "Elsewhere" });
      expect(first.name).toBe("Production");
      const retired = await repo().retireApiKey(first.id, at(0));

      expect(await repo().listApiKeys(program.id)).toEqual([second, retired]);
      expect(await repo().listApiKeys(987_654)).toEqual([]);
    });

    it("records a key's last use: it moves forward, never back", async () => {
      const program = await repo().createProgram(percentageProgram());
      const prefix = `pk_${unique()}_use`;
      const key = await repo().createApiKey({ programId: program.id, prefix, secretHash: "h" });

      await repo().recordApiKeyUse(key.id, at(DAY));
      expect((await repo().findApiKeyByPrefix(prefix))?.lastUsedAt).toEqual(at(DAY));
      await repo().recordApiKeyUse(key.id, at(0));
      expect((await repo().findApiKeyByPrefix(prefix))?.lastUsedAt).toEqual(at(DAY));
      await repo().recordApiKeyUse(key.id, at(2 * DAY));
      expect(await repo().findApiKeyByPrefix(prefix)).toEqual({ ...key, lastUsedAt: at(2 * DAY) });
      await expect(repo().recordApiKeyUse(987_654, at(0))).resolves.toBeUndefined();
    });

    it("retires a key only in the program named, when one is", async () => {
      const program = await repo().createProgram(percentageProgram());
      const other = await repo().createProgram(percentageProgram());
      const prefix = `pk_${unique()}_scoped`;
      const key = await repo().createApiKey({ programId: program.id, prefix, secretHash: "h" });

      expect(await repo().retireApiKey(key.id, at(0), other.id)).toBeNull();
      expect((await repo().findApiKeyByPrefix(prefix))?.retiredAt).toBeNull();
      expect(await repo().retireApiKey(key.id, at(DAY), program.id)).toEqual({ ...key, retiredAt: at(DAY) });
      // Already retired: the first date, in its program; still nothing through another.
      expect((await repo().retireApiKey(key.id, at(2 * DAY), program.id))?.retiredAt).toEqual(at(DAY));
      expect(await repo().retireApiKey(key.id, at(2 * DAY), other.id)).toBeNull();
    });

    it("retires a key once: retiring again keeps the first retiredAt", async () => {
      const program = await repo().createProgram(percentageProgram());
      const prefix = `pk_${unique()}_retire`;
      const key = await repo().createApiKey({ programId: program.id, prefix, secretHash: "h" });

      const first = await repo().retireApiKey(key.id, at(0));
      expect(first).toEqual({ ...key, retiredAt: at(0) });

      const second = await repo().retireApiKey(key.id, at(DAY));
      expect(second?.retiredAt).toEqual(at(0));
      expect((await repo().findApiKeyByPrefix(prefix))?.retiredAt).toEqual(at(0));
    });

    it("returns null when retiring an unknown key", async () => {
      expect(await repo().retireApiKey(987_654, at(0))).toBeNull();
    });
  });

  describe("partners", () => {
    it("round-trips partners with and without an email and a customer key", async () => {
      const withEmail = await repo().createPartner({ name: "Ada", email: "ada@example.com", customerKey: "user-ada" });
      const withoutEmail = await repo().createPartner({ name: "Bob", email: null });

      expect(Number.isInteger(withEmail.id)).toBe(true);
      expect(withEmail.id).not.toBe(withoutEmail.id);
      expect(withEmail).toEqual({ id: withEmail.id, name: "Ada", email: "ada@example.com", customerKey: "user-ada", createdAt: expect.any(Date) });
      expect(withoutEmail).toEqual({ id: withoutEmail.id, name: "Bob", email: null, customerKey: null, createdAt: expect.any(Date) });
      expect(await repo().getPartner(withEmail.id)).toEqual(withEmail);
      expect(await repo().getPartner(withoutEmail.id)).toEqual(withoutEmail);
      expect(await repo().getPartner(987_654)).toBeNull();
    });
  });

  describe("enrollments", () => {
    it("creates an enrollment and finds it by referral code and by partner", async () => {
      const program = await repo().createProgram(percentageProgram());
      const partner = await repo().createPartner({ name: "Eve", email: null });
      const code = `code-${unique()}`;

      const enrollment = await repo().createEnrollment({ partnerId: partner.id, programId: program.id, referralCode: code, status: "approved" });
      expect(enrollment).not.toBeNull();
      expect(Number.isInteger(enrollment!.id)).toBe(true);
      expect(enrollment).toEqual({
        id: enrollment!.id,
        partnerId: partner.id,
        programId: program.id,
        status: "approved",
        referralCode: code,
        createdAt: expect.any(Date),
      });
      expect(await repo().findEnrollmentByReferralCode(program.id, code)).toEqual(enrollment);
      expect(await repo().findEnrollment(program.id, partner.id)).toEqual(enrollment);
    });

    it("scopes enrollments by program", async () => {
      const program = await repo().createProgram(percentageProgram());
      const other = await repo().createProgram(percentageProgram());
      const partner = await repo().createPartner({ name: "Fay", email: null });
      const code = `code-${unique()}`;
      await repo().createEnrollment({ partnerId: partner.id, programId: program.id, referralCode: code, status: "approved" });

      expect(await repo().findEnrollmentByReferralCode(other.id, code)).toBeNull();
      expect(await repo().findEnrollment(other.id, partner.id)).toBeNull();
      expect(await repo().findEnrollmentByReferralCode(program.id, `${code}-unknown`)).toBeNull();
    });

    it("returns null for a referral code already used in the program", async () => {
      const program = await repo().createProgram(percentageProgram());
      const first = await repo().createPartner({ name: "First", email: null });
      const second = await repo().createPartner({ name: "Second", email: null });
      const code = `code-${unique()}`;

      const kept = await repo().createEnrollment({ partnerId: first.id, programId: program.id, referralCode: code, status: "approved" });
      expect(await repo().createEnrollment({ partnerId: second.id, programId: program.id, referralCode: code, status: "pending" })).toBeNull();
      expect(await repo().findEnrollmentByReferralCode(program.id, code)).toEqual(kept);
      expect(await repo().findEnrollment(program.id, second.id)).toBeNull();
    });

    it("returns null for a partner already enrolled in the program", async () => {
      const program = await repo().createProgram(percentageProgram());
      const partner = await repo().createPartner({ name: "Once", email: null });
      const code = `code-${unique()}`;

      const kept = await repo().createEnrollment({ partnerId: partner.id, programId: program.id, referralCode: code, status: "approved" });
      expect(await repo().createEnrollment({ partnerId: partner.id, programId: program.id, referralCode: `${code}-again`, status: "approved" })).toBeNull();
      expect(await repo().findEnrollment(program.id, partner.id)).toEqual(kept);
      expect(await repo().findEnrollmentByReferralCode(program.id, `${code}-again`)).toBeNull();
    });

    it("lets exactly one of several concurrent enrollments with the same referral code win", async () => {
      const program = await repo().createProgram(percentageProgram());
      const partners = await Promise.all([1, 2, 3, 4, 5].map((n) => repo().createPartner({ name: `Racer ${n}`, email: null })));
      const code = `code-${unique()}`;

      const results = await Promise.all(partners.map((p) => repo().createEnrollment({ partnerId: p.id, programId: program.id, referralCode: code, status: "approved" })));
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      expect(await repo().findEnrollmentByReferralCode(program.id, code)).toEqual(winners[0]);
    });

    it("allows the same referral code and partner in another program", async () => {
      const a = await repo().createProgram(percentageProgram());
      const b = await repo().createProgram(flatProgram());
      const partner = await repo().createPartner({ name: "Both", email: null });
      const code = `code-${unique()}`;

      const inA = await repo().createEnrollment({ partnerId: partner.id, programId: a.id, referralCode: code, status: "approved" });
      const inB = await repo().createEnrollment({ partnerId: partner.id, programId: b.id, referralCode: code, status: "pending" });
      expect(inA).not.toBeNull();
      expect(inB).not.toBeNull();
      expect(inA!.id).not.toBe(inB!.id);
      expect((await repo().findEnrollmentByReferralCode(a.id, code))?.status).toBe("approved");
      expect((await repo().findEnrollmentByReferralCode(b.id, code))?.status).toBe("pending");
    });

    it("tells whether a program has an approved enrollment", async () => {
      const program = await repo().createProgram(percentageProgram());
      const other = await repo().createProgram(percentageProgram());
      expect(await repo().hasApprovedEnrollment(program.id)).toBe(false);

      const pending = await repo().createPartner({ name: "Pending", email: null });
      const declined = await repo().createPartner({ name: "Declined", email: null });
      await repo().createEnrollment({ partnerId: pending.id, programId: program.id, referralCode: `p-${unique()}`, status: "pending" });
      await repo().createEnrollment({ partnerId: declined.id, programId: program.id, referralCode: `d-${unique()}`, status: "declined" });
      expect(await repo().hasApprovedEnrollment(program.id)).toBe(false);

      const approved = await repo().createPartner({ name: "Approved", email: null });
      await repo().createEnrollment({ partnerId: approved.id, programId: program.id, referralCode: `a-${unique()}`, status: "approved" });
      expect(await repo().hasApprovedEnrollment(program.id)).toBe(true);
      expect(await repo().hasApprovedEnrollment(other.id)).toBe(false);
    });
  });
});

describe.each(backends)("programs repository contract on %s: partner portal lookups", (_name, backend) => {
  const repo = useRepository<ProgramsRepository>(backend, createProgramsRepository);

  it("finds partners by email, oldest first, and lists a partner's enrollments in every program", async () => {
    const p1 = await repo().createProgram(percentageProgram());
    const p2 = await repo().createProgram(flatProgram());
    const email = `portal-${unique()}@example.com`;
    const first = await repo().createPartner({ name: "First", email });
    const second = await repo().createPartner({ name: "Second", email });
    await repo().createPartner({ name: "Other", email: `other-${unique()}@example.com` });
    expect(await repo().findPartnersByEmail(email)).toEqual([first, second]);
    expect(await repo().findPartnersByEmail(`nobody-${unique()}@example.com`)).toEqual([]);

    const e1 = await repo().createEnrollment({ partnerId: first.id, programId: p1.id, referralCode: `a${unique()}`, status: "approved" });
    const e2 = await repo().createEnrollment({ partnerId: first.id, programId: p2.id, referralCode: `b${unique()}`, status: "pending" });
    await repo().createEnrollment({ partnerId: second.id, programId: p1.id, referralCode: `c${unique()}`, status: "approved" });
    expect(await repo().listPartnerEnrollments(first.id)).toEqual([e1, e2]);
    expect(await repo().listPartnerEnrollments(999_999)).toEqual([]);
  });
});
