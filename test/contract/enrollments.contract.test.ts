/**
 * The partners list, partner approval and the partner detail in the programs
 * storage contract (listEnrollments and its search, findEnrolledPartners,
 * setEnrollmentStatus, getEnrolledPartner, setEnrollmentNotes), on every
 * reachable backend.
 */
import { createProgramsRepository } from "../../services/programs/storage";
import type { ProgramsRepository } from "../../services/programs/repository";
import { decodeCursor } from "../../shared/pagination";
import { backends, counter, useRepository } from "./harness";

const unique = counter();

describe.each(backends)("programs repository: enrollments on %s", (_name, backend) => {
  const repo = useRepository<ProgramsRepository>(backend, createProgramsRepository);

  async function program() {
    return repo().createProgram({
      workspaceId: null,
      name: `Program ${unique()}`,
      currency: "usd",
      commissionRule: { type: "flat", amountCents: 100 },
      holdDays: 0,
      recurringCommissionMonths: null,
      testMode: false,
      selfReferralGuard: true,
      paymentTrackingMode: "s2s",
      allowedOrigins: [],
    });
  }

  async function enroll(programId: number, name: string, status: "approved" | "pending" | "declined", over: { email?: string | null; referralCode?: string } = {}) {
    const partner = await repo().createPartner({ name, email: over.email === undefined ? `${name.toLowerCase()}@example.com` : over.email });
    const enrollment = await repo().createEnrollment({ partnerId: partner.id, programId, referralCode: over.referralCode ?? `code-${unique()}`, status });
    return { partner, enrollment: enrollment! };
  }

  test("newest first, one page at a time with the cursor, filtered by status, each with its partner", async () => {
    const p = await program();
    const other = await program();
    const made = [];
    for (const [i, status] of (["approved", "pending", "approved", "declined", "pending"] as const).entries()) made.push(await enroll(p.id, `P${i}`, status));
    await enroll(other.id, "Elsewhere", "approved");

    const first = await repo().listEnrollments(p.id, { limit: 2 });
    expect(first.data.map((e) => e.partner.name)).toEqual(["P4", "P3"]);
    expect(first.data[0]).toEqual({ ...made[4].enrollment, partner: made[4].partner });
    const cursor = decodeCursor(first.nextCursor!)!;
    const second = await repo().listEnrollments(p.id, { limit: 2, cursor });
    expect(second.data.map((e) => e.partner.name)).toEqual(["P2", "P1"]);
    const last = await repo().listEnrollments(p.id, { limit: 2, cursor: decodeCursor(second.nextCursor!)! });
    expect(last).toMatchObject({ data: [{ partner: { name: "P0" } }], nextCursor: null });

    const pending = await repo().listEnrollments(p.id, { limit: 10, status: "pending" });
    expect(pending).toMatchObject({ data: [{ partner: { name: "P4" } }, { partner: { name: "P1" } }], nextCursor: null });
    expect((await repo().listEnrollments(p.id, { limit: 1, status: "declined" })).nextCursor).toBeNull();

    const found = await repo().findEnrolledPartners(p.id, [made[1].partner.id, made[3].partner.id, 999_999]);
    expect(found.map((e) => [e.partnerId, e.status, e.partner.name]).sort()).toEqual(
      [
        [made[1].partner.id, "pending", "P1"],
        [made[3].partner.id, "declined", "P3"],
      ].sort(),
    );
    expect(await repo().findEnrolledPartners(other.id, [made[0].partner.id])).toEqual([]);
    expect(await repo().findEnrolledPartners(p.id, [])).toEqual([]);
  });

  test("setEnrollmentStatus changes only from the allowed statuses, once, and says so", async () => {
    const p = await program();
    const { partner, enrollment } = await enroll(p.id, "Pat", "pending");
    const approved = await repo().setEnrollmentStatus(p.id, partner.id, "approved", new Date(), ["pending", "declined"]);
    expect(approved).toEqual({ enrollment: { ...enrollment, status: "approved" }, enrolled: true, changed: true });
    expect(await repo().setEnrollmentStatus(p.id, partner.id, "approved", new Date(), ["pending", "declined"])).toEqual({
      enrollment: { ...enrollment, status: "approved" },
      enrolled: false,
      changed: false,
    });
    // Not from a status outside the list: unchanged, as it is.
    expect(await repo().setEnrollmentStatus(p.id, partner.id, "declined", new Date(), ["pending"])).toMatchObject({ enrollment: { status: "approved" }, changed: false });
    expect((await repo().findEnrollment(p.id, partner.id))!.status).toBe("approved");
    expect(await repo().setEnrollmentStatus(p.id, 999_999, "approved", new Date(), ["pending"])).toBeNull();

    // Two decisions at once on a pending enrollment: exactly one applies.
    const { partner: q } = await enroll(p.id, "Quinn", "pending");
    const both = await Promise.all([
      repo().setEnrollmentStatus(p.id, q.id, "approved", new Date(), ["pending"]),
      repo().setEnrollmentStatus(p.id, q.id, "declined", new Date(), ["pending"]),
    ]);
    expect(both.filter((r) => r!.changed)).toHaveLength(1);
    expect((await repo().findEnrollment(p.id, q.id))!.status).toBe(both.find((r) => r!.changed)!.enrollment.status);
  });

  describe("search (q)", () => {
    let programId: number;
    let made: Record<string, Awaited<ReturnType<typeof enroll>>>;
    const names = (page: { data: Array<{ partner: { name: string } }> }) => page.data.map((e) => e.partner.name);
    const search = (q: string, over: { status?: "approved" | "pending" | "declined"; limit?: number } = {}) => repo().listEnrollments(programId, { limit: 50, q, ...over });

    beforeAll(async () => {
      programId = (await program()).id;
      const other = await program();
      made = {};
      // Oldest first: the list answers newest first.
      made.jane = await enroll(programId, "Jane Doe", "approved", { email: "jane@shop.example", referralCode: `jd-${unique()}` });
      made.percent = await enroll(programId, "Save 100% Club", "approved", { email: null, referralCode: `save-${unique()}` });
      made.thousand = await enroll(programId, "Save 1000 Club", "pending", { email: "save1000@example.com", referralCode: `save1000-${unique()}` });
      made.underscore = await enroll(programId, "Ann", "approved", { email: "ann@example.com", referralCode: `ann_b${unique()}` });
      made.dash = await enroll(programId, "Annabel", "declined", { email: "annabel@example.com", referralCode: `annxb${unique()}` });
      made.backslash = await enroll(programId, "Back\\slash (a.k.a. [x]*)", "approved", { email: null, referralCode: `bs-${unique()}` });
      made.coded = await enroll(programId, "Carl", "approved", { email: "carl@example.com", referralCode: "SPRING-Deal" });
      await enroll(other.id, "Jane Elsewhere", "approved", { email: "jane@elsewhere.example" });
    });

    test("a case-insensitive contains match on the partner's name, email or the referral code, in list order, of this program only", async () => {
      expect(names(await search("jane"))).toEqual(["Jane Doe"]);
      expect(names(await search("JANE DOE"))).toEqual(["Jane Doe"]);
      expect(names(await search("shop.EXAMPLE"))).toEqual(["Jane Doe"]);
      expect(names(await search("spring-deal"))).toEqual(["Carl"]);
      expect(names(await search("ann"))).toEqual(["Annabel", "Ann"]);
      expect(names(await search("club"))).toEqual(["Save 1000 Club", "Save 100% Club"]);
      expect(await search("nobody")).toEqual({ data: [], nextCursor: null });
      // Each row is the list's row: the enrollment and its partner.
      expect((await search("carl")).data).toEqual([{ ...made.coded.enrollment, partner: made.coded.partner }]);
    });

    test("%, _, \\ and regular-expression characters match themselves", async () => {
      expect(names(await search("100%"))).toEqual(["Save 100% Club"]);
      expect(names(await search("%"))).toEqual(["Save 100% Club"]);
      expect(names(await search("ann_"))).toEqual(["Ann"]);
      expect(names(await search("_"))).toEqual(["Ann"]);
      expect(names(await search("\\"))).toEqual(["Back\\slash (a.k.a. [x]*)"]);
      expect(names(await search("(a.k.a. [x]*)"))).toEqual(["Back\\slash (a.k.a. [x]*)"]);
      expect(names(await search("a.k"))).toEqual(["Back\\slash (a.k.a. [x]*)"]);
      expect(names(await search(".*"))).toEqual([]);
    });

    test("with the status filter, and one page at a time with the cursor", async () => {
      expect(names(await search("save", { status: "pending" }))).toEqual(["Save 1000 Club"]);
      expect(names(await search("save", { status: "declined" }))).toEqual([]);
      // "N": Carl (SPRING-Deal), Annabel, Ann and Jane; the rows between them are skipped, page after page.
      expect(names(await search("N"))).toEqual(["Carl", "Annabel", "Ann", "Jane Doe"]);
      const first = await search("N", { limit: 2 });
      expect(names(first)).toEqual(["Carl", "Annabel"]);
      const second = await repo().listEnrollments(programId, { limit: 2, q: "N", cursor: decodeCursor(first.nextCursor!)! });
      expect(second).toMatchObject({ data: [{ partner: { name: "Ann" } }, { partner: { name: "Jane Doe" } }], nextCursor: null });
      const byOne = await search("N", { limit: 3 });
      expect(names(byOne)).toEqual(["Carl", "Annabel", "Ann"]);
      expect(await repo().listEnrollments(programId, { limit: 3, q: "N", cursor: decodeCursor(byOne.nextCursor!)! })).toMatchObject({
        data: [{ partner: { name: "Jane Doe" } }],
        nextCursor: null,
      });
    });
  });

  test("notes: empty by default, set and replaced per program, never on the enrollment the other methods answer", async () => {
    const p = await program();
    const other = await program();
    const { partner, enrollment } = await enroll(p.id, "Noted", "pending");
    await repo().createEnrollment({ partnerId: partner.id, programId: other.id, referralCode: `code-${unique()}`, status: "approved" });

    expect(await repo().getEnrolledPartner(p.id, partner.id)).toEqual({ ...enrollment, partner, notes: "", tenantId: null, metadata: {} });
    const text = "Line one <b>not HTML</b>\nLine two: 100% & more \u00e9";
    expect(await repo().updateEnrollment(p.id, partner.id, { notes: text })).toEqual({ ...enrollment, partner, notes: text, tenantId: null, metadata: {} });
    expect(await repo().getEnrolledPartner(p.id, partner.id)).toEqual({ ...enrollment, partner, notes: text, tenantId: null, metadata: {} });
    // Per program: the other enrollment of the same partner keeps its own (none).
    expect((await repo().getEnrolledPartner(other.id, partner.id))!.notes).toBe("");
    expect(await repo().updateEnrollment(p.id, partner.id, { notes: "x".repeat(2000) })).toMatchObject({ notes: "x".repeat(2000) });
    expect(await repo().updateEnrollment(p.id, partner.id, { notes: "" })).toMatchObject({ notes: "" });

    // Not enrolled: null, nothing written.
    expect(await repo().getEnrolledPartner(p.id, 999_999)).toBeNull();
    expect(await repo().updateEnrollment(p.id, 999_999, { notes: "x" })).toBeNull();
    const stranger = await repo().createPartner({ name: "Stranger", email: null });
    expect(await repo().updateEnrollment(p.id, stranger.id, { notes: "x" })).toBeNull();
    expect(await repo().getEnrolledPartner(p.id, stranger.id)).toBeNull();

    // The enrollment as other services and the partner portal get it carries no notes, and a status change keeps them.
    await repo().updateEnrollment(p.id, partner.id, { notes: "kept" });
    expect(await repo().findEnrollment(p.id, partner.id)).toEqual(enrollment);
    expect((await repo().listPartnerEnrollments(partner.id)).find((e) => e.programId === p.id)).toEqual(enrollment);
    expect((await repo().listEnrollments(p.id, { limit: 10 })).data).toEqual([{ ...enrollment, partner }]);
    expect(await repo().setEnrollmentStatus(p.id, partner.id, "approved", new Date(), ["pending"])).toMatchObject({ enrollment: { ...enrollment, status: "approved" }, changed: true });
    expect(await repo().getEnrolledPartner(p.id, partner.id)).toEqual({ ...enrollment, status: "approved", partner, notes: "kept", tenantId: null, metadata: {} });
  });

  test("the merchant's tenant id (unique in the program), metadata and referral code: set, found, refused when taken", async () => {
    const p = await program();
    const other = await program();
    const { partner, enrollment } = await enroll(p.id, "Tenant", "approved");
    const second = await enroll(p.id, "Second", "approved");
    const inOther = await enroll(other.id, "Elsewhere", "approved");
    const tenantId = `user-${unique()}`;
    const updated = await repo().updateEnrollment(p.id, partner.id, { tenantId, metadata: { plan: "pro", source: "signup" }, referralCode: `new-${unique()}` });
    expect(updated).toMatchObject({ partner, tenantId, metadata: { plan: "pro", source: "signup" }, notes: "" });
    // Another program may use the same tenant id; another partner of this program may not, nor its referral code.
    expect(await repo().updateEnrollment(other.id, inOther.partner.id, { tenantId })).toMatchObject({ tenantId });
    expect(await repo().updateEnrollment(p.id, second.partner.id, { tenantId })).toBe("duplicate");
    expect(await repo().updateEnrollment(p.id, second.partner.id, { referralCode: (updated as { referralCode: string }).referralCode })).toBe("duplicate");
    expect(await repo().getEnrolledPartner(p.id, second.partner.id)).toMatchObject({ tenantId: null, referralCode: second.enrollment.referralCode });
    // Found by tenant id and by exact email, in this program only.
    expect((await repo().listEnrollments(p.id, { tenantId, limit: 10 })).data.map((e) => e.partnerId)).toEqual([partner.id]);
    expect((await repo().listEnrollments(p.id, { tenantId: "nobody", limit: 10 })).data).toEqual([]);
    expect((await repo().listEnrollments(p.id, { email: partner.email!, limit: 10 })).data.map((e) => e.partnerId)).toEqual([partner.id]);
    expect(await repo().updateEnrollment(p.id, partner.id, { tenantId: null, metadata: {} })).toMatchObject({ tenantId: null, metadata: {}, id: enrollment.id });
  });
});
