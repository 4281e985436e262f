/**
 * The partners list and partner approval in the programs storage contract
 * (listEnrollments, findEnrolledPartners, setEnrollmentStatus), on every
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

  async function enroll(programId: number, name: string, status: "approved" | "pending" | "declined") {
    const partner = await repo().createPartner({ name, email: `${name.toLowerCase()}@example.com` });
    const enrollment = await repo().createEnrollment({ partnerId: partner.id, programId, referralCode: `code-${unique()}`, status });
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
});
