import { createProgramsRepository } from "../../services/programs/storage";
import { DEFAULT_APPLICATION_SETTINGS, type NewApplication } from "../../services/programs/repository";
import { DEFAULT_FRAUD_SETTINGS } from "../../shared/domain/fraud-rules";
import { ALLOWED_FROM } from "../../services/programs/enrollment-status";
import { decodeCursor, type CursorPosition } from "../../shared/pagination";
import type { NewProgram, PartnerProfile, PartnerProfileFields, ProgramsRepository } from "../../services/programs/repository";
import { at, backends, counter, DAY, useRepository } from "./harness";

const unique = counter();

const decodeCursorOf = (cursor: string | null): CursorPosition => decodeCursor(cursor!)!;

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
        brandColor: null,
        logoUrl: null,
        ...input,
        id: created.id,
        applications: DEFAULT_APPLICATION_SETTINGS,
        fraudSettings: DEFAULT_FRAUD_SETTINGS,
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
    it("sets each fraud rule given whole and keeps the others", async () => {
      const program = await repo().createProgram(percentageProgram());
      const first = await repo().updateProgramSettings(program.id, { fraudSettings: { click_injection: { enabled: true, seconds: 30 }, paid_traffic: { enabled: true } } });
      expect(first!.fraudSettings).toEqual({ ...DEFAULT_FRAUD_SETTINGS, click_injection: { enabled: true, seconds: 30 }, paid_traffic: { enabled: true } });
      const second = await repo().updateProgramSettings(program.id, { fraudSettings: { banned_referrer: { enabled: true, domains: ["spam.example"] } } });
      expect(second!.fraudSettings).toEqual({ ...first!.fraudSettings, banned_referrer: { enabled: true, domains: ["spam.example"] } });
      expect((await repo().getProgram(program.id))!.fraudSettings).toEqual(second!.fraudSettings);
    });

    it("changes only the application settings given, and keeps the others", async () => {
      const program = await repo().createProgram(percentageProgram());
      const open = await repo().updateProgramSettings(program.id, { applications: { open: true, questions: ["Where?", "How many readers?"], terms: "Be nice." } });
      expect(open!.applications).toEqual({ ...DEFAULT_APPLICATION_SETTINGS, open: true, questions: ["Where?", "How many readers?"], terms: "Be nice." });
      const auto = await repo().updateProgramSettings(program.id, { name: "With a form", applications: { autoApprove: true, autoApproveGroupId: 4, description: "Hello" } });
      expect(auto).toEqual({
        ...open,
        name: "With a form",
        applications: { open: true, autoApprove: true, autoApproveGroupId: 4, description: "Hello", questions: ["Where?", "How many readers?"], terms: "Be nice." },
      });
      const back = await repo().updateProgramSettings(program.id, { applications: { autoApproveGroupId: null, questions: [], open: undefined } });
      expect(back!.applications).toEqual({ open: true, autoApprove: true, autoApproveGroupId: null, description: "Hello", questions: [], terms: "Be nice." });
      expect(await repo().getProgram(program.id)).toEqual(back);
      expect(await repo().updateProgramSettings(program.id, { applications: {} })).toEqual(back);
    });

    it("changes only the settings given, in one write, and keeps the rest", async () => {
      const program = await repo().createProgram(percentageProgram());
      const patch = {
        name: "Renamed",
        currency: "usd",
        holdDays: 7,
        cookieWindowDays: 60,
        defaultLandingUrl: "https://shop.example/welcome",
        brandColor: "#6d28d9",
        logoUrl: "https://shop.example/logo.svg",
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
        // Without scopes, tracking only (what every key made before scopes can do).
        scopes: ["tracking"],
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

    it("keeps a key's scopes", async () => {
      const program = await repo().createProgram(percentageProgram());
      const prefix = `pk_${unique()}_scopes`;
      const key = await repo().createApiKey({ programId: program.id, prefix, secretHash: "h", scopes: ["partners:write", "commissions:read"] });
      expect(key.scopes).toEqual(["partners:write", "commissions:read"]);
      expect((await repo().findApiKeyByPrefix(prefix))!.scopes).toEqual(["partners:write", "commissions:read"]);
    });

    it("claims an Idempotency-Key once: the same request then waits or replays the answer, another request is a mismatch", async () => {
      const program = await repo().createProgram(percentageProgram());
      const key = await repo().createApiKey({ programId: program.id, prefix: `pk_${unique()}_idem`, secretHash: "h" });
      const claim = (requestHash: string, now = at(0), expiresBefore = at(-DAY)) => repo().claimIdempotencyKey({ apiKeyId: key.id, key: "order-7", requestHash, now, expiresBefore });

      expect(await claim("A")).toEqual({ state: "claimed" });
      expect(await claim("A")).toEqual({ state: "in_progress" });
      expect(await claim("B")).toEqual({ state: "mismatch" });
      await repo().releaseIdempotencyKey(key.id, "order-7");
      expect(await claim("A")).toEqual({ state: "claimed" });
      await repo().completeIdempotencyKey(key.id, "order-7", { status: 201, body: { id: 9, nested: { empty: {} } } });
      expect(await claim("A")).toEqual({ state: "done", status: 201, body: { id: 9, nested: { empty: {} } } });
      // A finished answer is not released; another key of the same API key is its own.
      await repo().releaseIdempotencyKey(key.id, "order-7");
      expect(await claim("A")).toEqual({ state: "done", status: 201, body: { id: 9, nested: { empty: {} } } });
      expect(await repo().claimIdempotencyKey({ apiKeyId: key.id, key: "order-8", requestHash: "B", now: at(0), expiresBefore: at(-DAY) })).toEqual({ state: "claimed" });
      // Past its lifetime the record counts as none: the next request claims the key, whatever it asks.
      expect(await claim("B", at(2 * DAY), at(DAY))).toEqual({ state: "claimed" });
      expect(await claim("A", at(2 * DAY), at(DAY))).toEqual({ state: "mismatch" });
      // The sweep forgets records past their lifetime.
      expect(await repo().deleteIdempotencyKeysBefore(at(DAY))).toBeGreaterThanOrEqual(1);
      expect(await repo().claimIdempotencyKey({ apiKeyId: key.id, key: "order-8", requestHash: "C", now: at(2 * DAY), expiresBefore: at(DAY) })).toEqual({ state: "claimed" });
      expect(await claim("A", at(2 * DAY), at(DAY))).toEqual({ state: "mismatch" });
    });

    it("keeps a program's activity and lists it newest first, by actor or kind, page by page", async () => {
      const program = await repo().createProgram(percentageProgram());
      const entry = (n: number, actor: { actorType: "user" | "api_key" | "operator"; actorId: number | null }, kind: "partners" | "settings") => ({
        programId: program.id,
        ...actor,
        actorLabel: actor.actorType === "operator" ? null : `actor ${actor.actorId}`,
        kind,
        operation: "programs.updateSettings",
        summary: "Change the program's settings",
        method: "PATCH",
        path: `/api/v1/settings/${n}`,
        location: null,
        status: 200,
        clientAddress: "203.0.113.7",
        userAgent: null,
        requestId: `req-${n}`,
        createdAt: at(n),
      });
      const user = { actorType: "user" as const, actorId: 5 };
      const key = { actorType: "api_key" as const, actorId: 5 };
      const operator = { actorType: "operator" as const, actorId: null };
      const stored = await repo().recordActivity(entry(1, user, "partners"));
      expect(stored).toEqual({ id: expect.any(Number), ...entry(1, user, "partners") });
      await repo().recordActivity(entry(2, key, "settings"));
      await repo().recordActivity(entry(3, operator, "partners"));
      await repo().recordActivity(entry(3, user, "settings"));

      const paths = async (filter: Record<string, unknown>) => (await repo().listActivity(program.id, { limit: 10, ...filter })).data.map((e) => e.path);
      expect(await paths({})).toEqual(["/api/v1/settings/3", "/api/v1/settings/3", "/api/v1/settings/2", "/api/v1/settings/1"]);
      expect(await paths({ actorType: "user", actorId: 5 })).toEqual(["/api/v1/settings/3", "/api/v1/settings/1"]);
      expect(await paths({ actorType: "operator", actorId: null })).toEqual(["/api/v1/settings/3"]);
      expect(await paths({ kind: "partners" })).toEqual(["/api/v1/settings/3", "/api/v1/settings/1"]);
      const first = await repo().listActivity(program.id, { limit: 2 });
      const second = await repo().listActivity(program.id, { limit: 2, cursor: decodeCursor(first.nextCursor!)! });
      expect([...first.data, ...second.data].map((e) => e.requestId)).toEqual((await repo().listActivity(program.id, { limit: 10 })).data.map((e) => e.requestId));
      expect(second.nextCursor).toBeNull();
      expect((await repo().listActivity((await repo().createProgram(percentageProgram())).id, { limit: 10 })).data).toEqual([]);
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

describe.each(backends)("programs repository contract on %s: partner profiles", (_name, backend) => {
  const repo = useRepository<ProgramsRepository>(backend, createProgramsRepository);
  const fieldsOf = (p: PartnerProfile): PartnerProfileFields => ({
    name: p.name,
    country: p.country,
    payoutMethod: p.payoutMethod,
    paypalEmail: p.paypalEmail,
    bank: p.bank,
    locale: p.locale,
  });
  const bank = { accountHolder: "Ada Lovelace", iban: "DE89370400440532013000", accountNumber: null, routingNumber: null, swift: "COBADEFFXXX" };

  it("starts empty, changed since the partner's creation; null for an unknown partner", async () => {
    const partner = await repo().createPartner({ name: "Ada", email: "ada@example.com" });
    expect(await repo().getPartnerProfile(partner.id)).toEqual({
      partnerId: partner.id,
      name: "Ada",
      email: "ada@example.com",
      country: null,
      payoutMethod: null,
      paypalEmail: null,
      bank: null,
      locale: null,
      updatedAt: partner.createdAt,
    });
    expect(await repo().getPartnerProfile(987_654)).toBeNull();
    const change = jest.fn((p: PartnerProfile) => fieldsOf(p));
    expect(await repo().updatePartnerProfile(987_654, change, at(0))).toBeNull();
    expect(change).not.toHaveBeenCalled();
  });

  it("writes every field the change returns, with updatedAt; the partner as other services see it is unchanged", async () => {
    const partner = await repo().createPartner({ name: "Ada", email: "ada@example.com", customerKey: "user-ada" });
    const seen: PartnerProfile[] = [];
    const updated = await repo().updatePartnerProfile(
      partner.id,
      (current) => {
        seen.push(current);
        return { ...fieldsOf(current), name: "Ada Lovelace", country: "GB", payoutMethod: "bank", paypalEmail: "ada@paypal.example", bank, locale: "fr" };
      },
      at(1),
    );
    expect(seen[0]).toMatchObject({ partnerId: partner.id, name: "Ada", bank: null });
    const expected = {
      partnerId: partner.id,
      name: "Ada Lovelace",
      email: "ada@example.com",
      country: "GB",
      payoutMethod: "bank",
      paypalEmail: "ada@paypal.example",
      bank,
      locale: "fr",
      updatedAt: at(1),
    };
    expect(updated).toEqual(expected);
    expect(await repo().getPartnerProfile(partner.id)).toEqual(expected);
    expect(await repo().getPartner(partner.id)).toEqual({ id: partner.id, name: "Ada Lovelace", email: "ada@example.com", customerKey: "user-ada", createdAt: partner.createdAt });

    // Clearing: the bank details and the rest back to none.
    const cleared = await repo().updatePartnerProfile(partner.id, (c) => ({ ...fieldsOf(c), country: null, payoutMethod: null, paypalEmail: null, bank: null, locale: null }), at(2));
    expect(cleared).toEqual({ ...expected, country: null, payoutMethod: null, paypalEmail: null, bank: null, locale: null, updatedAt: at(2) });
  });

  it("finds the other partners of a program sharing a PayPal email (any case), an IBAN or account numbers", async () => {
    const program = await repo().createProgram(percentageProgram());
    const elsewhere = await repo().createProgram(percentageProgram());
    const make = async (name: string, fields: Partial<ReturnType<typeof fieldsOf>>, programId = program.id) => {
      const partner = await repo().createPartner({ name, email: null });
      await repo().updatePartnerProfile(partner.id, (c) => ({ ...fieldsOf(c), ...fields }), at(1));
      await repo().createEnrollment({ partnerId: partner.id, programId, referralCode: `code-${partner.id}`, status: "approved" });
      return partner.id;
    };
    const ada = await make("Ada", { payoutMethod: "paypal", paypalEmail: "ada@paypal.example", bank });
    const sameMail = await make("Eve", { payoutMethod: "paypal", paypalEmail: "ADA@paypal.example" });
    const sameIban = await make("Bob", { payoutMethod: "bank", bank: { ...bank, accountHolder: "Bob" } });
    await make("Cy", { payoutMethod: "paypal", paypalEmail: "cy@paypal.example" });
    await make("Dan", { payoutMethod: "paypal", paypalEmail: "ada@paypal.example" }, elsewhere.id);
    expect(await repo().partnersSharingPayoutDetails(program.id, ada)).toEqual([sameMail, sameIban]);
    expect(await repo().partnersSharingPayoutDetails(program.id, sameIban)).toEqual([ada]);
    const alone = await make("Fay", {});
    expect(await repo().partnersSharingPayoutDetails(program.id, alone)).toEqual([]);
  });

  it("writes nothing when the change throws, and throws it", async () => {
    const partner = await repo().createPartner({ name: "Ada", email: null });
    const before = await repo().getPartnerProfile(partner.id);
    await expect(
      repo().updatePartnerProfile(
        partner.id,
        () => {
          throw new Error("refused");
        },
        at(3),
      ),
    ).rejects.toThrow("refused");
    expect(await repo().getPartnerProfile(partner.id)).toEqual(before);
  });

  it("applies concurrent changes one after the other, each on what the one before wrote", async () => {
    const partner = await repo().createPartner({ name: "n", email: null });
    await Promise.all(Array.from({ length: 5 }, (_, i) => repo().updatePartnerProfile(partner.id, (c) => ({ ...fieldsOf(c), name: `${c.name}+` }), at(10 + i))));
    expect((await repo().getPartnerProfile(partner.id))?.name).toBe("n+++++");
  });
});

describe.each(backends)("programs repository contract on %s: applications", (_name, backend) => {
  const repo = useRepository<ProgramsRepository>(backend, createProgramsRepository);

  const application = (programId: number, over: Partial<NewApplication> = {}): NewApplication => ({
    programId,
    name: "Jane Applicant",
    email: `jane-${unique()}@example.com`,
    website: "https://jane.example/",
    promotion: "A newsletter",
    answers: [{ question: "Where?", answer: "Everywhere" }],
    groupId: null,
    status: "pending",
    referralCode: `app-${unique()}`,
    now: at(unique() * 1000),
    ...over,
  });

  it("stores an application with a new partner and a pending enrollment, and finds it", async () => {
    const program = await repo().createProgram(percentageProgram());
    const input = application(program.id);
    const result = await repo().createApplication(input);
    if (result.outcome !== "created") throw new Error(result.outcome);
    expect(result.partner).toEqual({ id: expect.any(Number), name: "Jane Applicant", email: input.email, customerKey: null, createdAt: expect.any(Date) });
    expect(result.enrollment).toMatchObject({ partnerId: result.partner.id, programId: program.id, status: "pending", referralCode: input.referralCode });
    expect(result.enrolled).toBe(false);
    expect(result.application).toEqual({
      id: expect.any(Number),
      programId: program.id,
      partnerId: result.partner.id,
      name: "Jane Applicant",
      email: input.email,
      website: "https://jane.example/",
      promotion: "A newsletter",
      answers: [{ question: "Where?", answer: "Everywhere" }],
      status: "pending",
      declineMessage: null,
      groupId: null,
      createdAt: input.now,
      decidedAt: null,
    });
    expect(await repo().getApplication(program.id, result.application.id)).toEqual(result.application);
    expect(await repo().findPartnerApplication(program.id, result.partner.id)).toEqual(result.application);
    expect(await repo().findEnrollment(program.id, result.partner.id)).toEqual(result.enrollment);
    // Another program's id, or an unknown one: none.
    const other = await repo().createProgram(flatProgram());
    expect(await repo().getApplication(other.id, result.application.id)).toBeNull();
    expect(await repo().getApplication(program.id, 987_654)).toBeNull();
    expect(await repo().findPartnerApplication(other.id, result.partner.id)).toBeNull();
    // No website and no answers are stored as such.
    const bare = await repo().createApplication(application(program.id, { website: null, answers: [] }));
    expect(bare.outcome === "created" && bare.application).toMatchObject({ website: null, answers: [] });
  });

  it("refuses an unknown program, a second pending application with one email, and an email enrolled approved or pending", async () => {
    const program = await repo().createProgram(percentageProgram());
    expect(await repo().createApplication(application(987_654))).toEqual({ outcome: "no_program" });
    const first = application(program.id);
    expect((await repo().createApplication(first)).outcome).toBe("created");
    expect(await repo().createApplication(application(program.id, { email: first.email }))).toEqual({ outcome: "application_exists" });

    const approved = await repo().createPartner({ name: "Approved", email: `approved-${unique()}@example.com` });
    await repo().createEnrollment({ partnerId: approved.id, programId: program.id, referralCode: `a-${unique()}`, status: "approved" });
    expect(await repo().createApplication(application(program.id, { email: approved.email! }))).toEqual({ outcome: "already_enrolled", status: "approved" });
    const pending = await repo().createPartner({ name: "Pending", email: `pending-${unique()}@example.com` });
    await repo().createEnrollment({ partnerId: pending.id, programId: program.id, referralCode: `p-${unique()}`, status: "pending" });
    expect(await repo().createApplication(application(program.id, { email: pending.email! }))).toEqual({ outcome: "already_enrolled", status: "pending" });
    // In another program the same email may apply.
    const other = await repo().createProgram(flatProgram());
    expect((await repo().createApplication(application(other.id, { email: first.email }))).outcome).toBe("created");
  });

  it("reuses the partner with the email: the oldest not enrolled; a declined one is enrolled again with its own code", async () => {
    const program = await repo().createProgram(percentageProgram());
    const other = await repo().createProgram(flatProgram());
    const email = `known-${unique()}@example.com`;
    const known = await repo().createPartner({ name: "Known Name", email });
    await repo().createPartner({ name: "Younger twin", email });
    await repo().createEnrollment({ partnerId: known.id, programId: other.id, referralCode: `k-${unique()}`, status: "approved" });
    const reused = await repo().createApplication(application(program.id, { email, name: "Typed Name" }));
    if (reused.outcome !== "created") throw new Error(reused.outcome);
    expect(reused.partner).toEqual(known);
    expect(reused.application).toMatchObject({ partnerId: known.id, name: "Typed Name" });

    const declinedPartner = await repo().createPartner({ name: "Declined", email: `declined-${unique()}@example.com` });
    const declinedEnrollment = await repo().createEnrollment({ partnerId: declinedPartner.id, programId: program.id, referralCode: `d-${unique()}`, status: "declined" });
    const again = await repo().createApplication(application(program.id, { email: declinedPartner.email! }));
    if (again.outcome !== "created") throw new Error(again.outcome);
    expect(again.partner.id).toBe(declinedPartner.id);
    expect(again.enrollment).toEqual({ ...declinedEnrollment, status: "pending" });
  });

  it("approves at once: the enrollment approved with its partner.enrolled event, the application decided with its group", async () => {
    const program = await repo().createProgram(percentageProgram());
    const input = application(program.id, { status: "approved", groupId: 9 });
    const result = await repo().createApplication(input);
    if (result.outcome !== "created") throw new Error(result.outcome);
    expect(result.enrolled).toBe(true);
    expect(result.enrollment.status).toBe("approved");
    expect(result.application).toMatchObject({ status: "approved", groupId: 9, decidedAt: input.now });
    const events = await repo().outbox.listOutbox({ limit: 1000 });
    expect(events.filter((e) => e.type === "partner.enrolled" && e.payload.partnerId === result.partner.id && e.payload.programId === program.id)).toHaveLength(1);
  });

  it("decides one of concurrent applications with one email", async () => {
    const program = await repo().createProgram(percentageProgram());
    const email = `racer-${unique()}@example.com`;
    const pending = await Promise.all([1, 2, 3, 4].map(() => repo().createApplication(application(program.id, { email }))));
    expect(pending.map((r) => r.outcome).sort()).toEqual(["application_exists", "application_exists", "application_exists", "created"]);
    const autoEmail = `auto-racer-${unique()}@example.com`;
    const approved = await Promise.all([1, 2, 3].map(() => repo().createApplication(application(program.id, { email: autoEmail, status: "approved" }))));
    expect(approved.map((r) => r.outcome).sort()).toEqual(["already_enrolled", "already_enrolled", "created"]);
    expect(await repo().findPartnersByEmail(autoEmail)).toHaveLength(1);
  });

  it("lists a program's applications newest first, by status, a page at a time", async () => {
    const program = await repo().createProgram(percentageProgram());
    const created = [];
    for (let i = 0; i < 5; i++) {
      const r = await repo().createApplication(application(program.id, { now: at(i * 1000) }));
      if (r.outcome !== "created") throw new Error(r.outcome);
      created.push(r.application);
    }
    await repo().decideApplication(program.id, created[1].id, { status: "declined", groupId: null, declineMessage: "No" }, at(10_000), ALLOWED_FROM.decline);
    const first = await repo().listApplications(program.id, { limit: 3 });
    expect(first.data.map((a) => a.id)).toEqual([created[4].id, created[3].id, created[2].id]);
    const second = await repo().listApplications(program.id, { limit: 3, cursor: decodeCursorOf(first.nextCursor) });
    expect(second.data.map((a) => a.id)).toEqual([created[1].id, created[0].id]);
    expect(second.nextCursor).toBeNull();
    expect((await repo().listApplications(program.id, { limit: 10, status: "pending" })).data.map((a) => a.id)).toEqual([created[4].id, created[3].id, created[2].id, created[0].id]);
    expect((await repo().listApplications(program.id, { limit: 10, status: "declined" })).data).toEqual([{ ...created[1], status: "declined", declineMessage: "No", decidedAt: at(10_000) }]);
    expect((await repo().listApplications(program.id, { limit: 10, status: "approved" })).data).toEqual([]);
  });

  it("decides a pending application once, with its enrollment; a decided one is returned as it is", async () => {
    const program = await repo().createProgram(percentageProgram());
    const r = await repo().createApplication(application(program.id));
    if (r.outcome !== "created") throw new Error(r.outcome);
    const approved = await repo().decideApplication(program.id, r.application.id, { status: "approved", groupId: 3, declineMessage: null }, at(5000), ALLOWED_FROM.approve);
    expect(approved).toEqual({
      application: { ...r.application, status: "approved", groupId: 3, decidedAt: at(5000) },
      changed: true,
      enrollment: { enrollment: { ...r.enrollment, status: "approved" }, enrolled: true, changed: true },
    });
    expect(await repo().getApplication(program.id, r.application.id)).toEqual(approved!.application);
    expect(await repo().findEnrollment(program.id, r.partner.id)).toEqual({ ...r.enrollment, status: "approved" });
    for (const status of ["approved", "declined"] as const) {
      const again = await repo().decideApplication(program.id, r.application.id, { status, groupId: null, declineMessage: "Late" }, at(6000), ALLOWED_FROM.decline);
      expect(again).toEqual({ application: approved!.application, changed: false, enrollment: null });
    }
    expect(await repo().decideApplication(program.id, 987_654, { status: "approved", groupId: null, declineMessage: null }, at(0), ALLOWED_FROM.approve)).toBeNull();
    const other = await repo().createProgram(flatProgram());
    expect(await repo().decideApplication(other.id, r.application.id, { status: "approved", groupId: null, declineMessage: null }, at(0), ALLOWED_FROM.approve)).toBeNull();
  });

  it("applies one of two concurrent decisions, and the enrollment follows that one", async () => {
    const program = await repo().createProgram(percentageProgram());
    const r = await repo().createApplication(application(program.id));
    if (r.outcome !== "created") throw new Error(r.outcome);
    const [a, d] = await Promise.all([
      repo().decideApplication(program.id, r.application.id, { status: "approved", groupId: null, declineMessage: null }, at(1), ALLOWED_FROM.approve),
      repo().decideApplication(program.id, r.application.id, { status: "declined", groupId: null, declineMessage: "No" }, at(2), ALLOWED_FROM.decline),
    ]);
    expect([a!.changed, d!.changed].sort()).toEqual([false, true]);
    const winner = a!.changed ? a! : d!;
    expect(a!.application).toEqual(winner.application);
    expect(d!.application).toEqual(winner.application);
    expect((await repo().findEnrollment(program.id, r.partner.id))!.status).toBe(winner.application.status);
  });
});
