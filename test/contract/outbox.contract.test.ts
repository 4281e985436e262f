/**
 * The generic outbox (shared/outbox) on every reachable backend: the
 * producers' outboxes as their repositories open them (attribution, sales,
 * programs), each written in the same transaction as its row, and the claim
 * contract the relay relies on (leases, one claimant, deferral, dispatch).
 * MongoDB runs when MONGO_URL points at a replica set; without it the run
 * says loudly that it was skipped (test/support/databases.ts).
 */
import { createAttributionRepository } from "../../services/attribution/storage";
import type { AttributionRepository } from "../../services/attribution/repository";
import { createProgramsRepository } from "../../services/programs/storage";
import type { ProgramsRepository } from "../../services/programs/repository";
import { createSalesRepository } from "../../services/sales/storage";
import type { NewSale, SalesRepository } from "../../services/sales/repository";
import { WEBHOOK_EVENTS } from "../../shared/events";
import type { OutboxStore } from "../../shared/outbox/outbox";
import { OutboxRelay } from "../../shared/outbox/relay";
import { at, backends, counter, SECOND, useRepository } from "./harness";

const unique = counter();

const sale = (programId: number, over: Partial<NewSale> = {}): NewSale => ({
  programId,
  transactionId: `txn_${unique()}`,
  amountCents: 10_000,
  currency: "usd",
  conversion: null,
  lines: null,
  discountIds: null,
  customerKey: "cust_1",
  email: "buyer@example.com",
  processorCustomerId: null,
  partnerId: 7,
  clickId: "clk_1",
  attributionMethod: "click",
  isTest: false,
  isRecurring: false,
  saleType: null,
  subscriptionId: null,
  occurredAt: new Date("2030-01-01T00:00:00.000Z"),
  commissionState: "pending",
  noCommissionReason: null,
  ...over,
});

describe.each(backends)("outbox contract on %s", (_name, backend) => {
  describe("sales outbox: sale.created with the sale", () => {
    const repo = useRepository<SalesRepository>(backend, createSalesRepository);

    it("writes one sale.created per new sale, with the documented payload, and none for a duplicate", async () => {
      const created = await repo().insertSale(sale(1, { transactionId: "order-1" }));
      expect(await repo().insertSale(sale(1, { transactionId: "order-1" }))).toBeNull();
      const events = await repo().outbox.listOutbox({ limit: 10 });
      expect(events.map((e) => e.type)).toEqual(["sale.created"]);
      const payload = WEBHOOK_EVENTS["sale.created"].schema.parse(events[0].payload);
      expect(payload).toMatchObject({ saleId: created!.id, programId: 1, transactionId: "order-1", amountCents: 10_000, partnerId: 7, commissionDue: true });
      expect(JSON.stringify(events[0].payload)).not.toContain("buyer@example.com");
    });

    claimContractOn(
      () => repo().outbox,
      async () => void (await repo().insertSale(sale(2))),
    );
  });

  describe("attribution outbox: lead.created with a new lead", () => {
    const repo = useRepository<AttributionRepository>(backend, createAttributionRepository);

    it("writes one lead.created for a new lead, none when the lead already exists", async () => {
      const lead = { programId: 1, customerKey: "user_1", email: "user@example.com", clickId: "clk_1", partnerId: 3, isTest: false, timestamp: at() };
      const first = await repo().recordLead(lead);
      const again = await repo().recordLead({ ...lead, partnerId: 4 });
      expect([first.created, again.created]).toEqual([true, false]);
      const events = await repo().outbox.listOutbox({ limit: 10 });
      expect(events.map((e) => e.type)).toEqual(["lead.created"]);
      expect(WEBHOOK_EVENTS["lead.created"].schema.parse(events[0].payload)).toMatchObject({
        leadId: first.lead.id,
        programId: 1,
        customerKey: "user_1",
        partnerId: 3,
        occurredAt: at().toISOString(),
      });
      expect(JSON.stringify(events[0].payload)).not.toContain("@");
    });

    claimContractOn(
      () => repo().outbox,
      async () => void (await repo().recordLead({ programId: 2, customerKey: `user_${unique()}`, email: null, clickId: null, partnerId: null, isTest: false, timestamp: at() })),
    );
  });

  describe("programs outbox: partner.enrolled when an enrollment becomes approved", () => {
    const repo = useRepository<ProgramsRepository>(backend, createProgramsRepository);

    it("writes partner.enrolled for an approved enrollment, for an approval later, and never twice", async () => {
      const program = await repo().createProgram({
        workspaceId: null,
        name: "P",
        currency: "usd",
        commissionRule: { type: "percentage", basisPoints: 2000 },
        holdDays: 30,
        recurringCommissionMonths: null,
        testMode: false,
        selfReferralGuard: true,
        paymentTrackingMode: "s2s",
        allowedOrigins: [],
      });
      const jane = await repo().createPartner({ name: "Jane", email: "jane@example.com" });
      const john = await repo().createPartner({ name: "John", email: null });
      const approved = await repo().createEnrollment({ partnerId: jane.id, programId: program.id, referralCode: "jane", status: "approved" });
      expect(await repo().createEnrollment({ partnerId: jane.id, programId: program.id, referralCode: "jane2", status: "approved" })).toBeNull();
      await repo().createEnrollment({ partnerId: john.id, programId: program.id, referralCode: "john", status: "pending" });
      expect((await repo().outbox.listOutbox({ limit: 10 })).map((e) => e.payload.partnerId)).toEqual([jane.id]);

      const later = at(SECOND);
      const result = await repo().setEnrollmentStatus(program.id, john.id, "approved", later);
      expect(result).toMatchObject({ enrolled: true, enrollment: { partnerId: john.id, status: "approved" } });
      expect(await repo().setEnrollmentStatus(program.id, john.id, "approved", at(2 * SECOND))).toMatchObject({ enrolled: false });
      expect(await repo().setEnrollmentStatus(program.id, 999_999, "approved", later)).toBeNull();
      expect(await repo().findEnrollment(program.id, john.id)).toMatchObject({ status: "approved" });

      const events = await repo().outbox.listOutbox({ limit: 10 });
      expect(events.map((e) => [e.type, e.payload.partnerId])).toEqual([
        ["partner.enrolled", john.id],
        ["partner.enrolled", jane.id],
      ]);
      expect(WEBHOOK_EVENTS["partner.enrolled"].schema.parse(events[0].payload)).toMatchObject({ partnerName: "John", referralCode: "john", enrolledAt: later.toISOString() });
      expect(WEBHOOK_EVENTS["partner.enrolled"].schema.parse(events[1].payload)).toMatchObject({ enrollmentId: approved!.id, partnerName: "Jane" });
      expect(JSON.stringify(events.map((e) => e.payload))).not.toContain("@");

      // Declined and approved again: a new enrollment in effect, a new event.
      await repo().setEnrollmentStatus(program.id, john.id, "declined", at(3 * SECOND));
      expect(await repo().setEnrollmentStatus(program.id, john.id, "approved", at(4 * SECOND))).toMatchObject({ enrolled: true });
      expect((await repo().outbox.listOutbox({ limit: 10 })).length).toBe(3);
    });

    it("writes one event when two approvals race", async () => {
      const program = await repo().createProgram({
        workspaceId: null,
        name: "Race",
        currency: "usd",
        commissionRule: { type: "flat", amountCents: 100 },
        holdDays: 0,
        recurringCommissionMonths: null,
        testMode: false,
        selfReferralGuard: true,
        paymentTrackingMode: "s2s",
        allowedOrigins: [],
      });
      const partner = await repo().createPartner({ name: "Racer", email: null });
      await repo().createEnrollment({ partnerId: partner.id, programId: program.id, referralCode: "racer", status: "pending" });
      const before = (await repo().outbox.listOutbox({ limit: 100 })).length;
      const results = await Promise.all([1, 2, 3].map(() => repo().setEnrollmentStatus(program.id, partner.id, "approved", at())));
      expect(results.filter((r) => r?.enrolled)).toHaveLength(1);
      expect((await repo().outbox.listOutbox({ limit: 100 })).length).toBe(before + 1);
    });
  });
});

/** The claim contract and the relay on one producer's outbox (drained first, then fed by `write`). */
function claimContractOn(outbox: () => OutboxStore, write: () => Promise<void>): void {
  it("claims pending events oldest first, one relay at a time, for the lease; defers and dispatches", async () => {
    await write();
    await write();
    const now = new Date(Date.now() + 1000);
    const first = await outbox().claimOutbox("relay-a", 30 * SECOND, 100, now);
    expect(first.length).toBeGreaterThanOrEqual(2);
    expect(first.map((e) => e.id)).toEqual([...first.map((e) => e.id)].sort((a, b) => a - b));
    // Leased: another relay gets none of them.
    expect(await outbox().claimOutbox("relay-b", 30 * SECOND, 100, now)).toEqual([]);

    // A failed dispatch is deferred: not claimable before its retry time, claimable after.
    const [deferred, ...rest] = first;
    await outbox().deferOutbox(deferred.id, "relay-a", new Date(now.getTime() + 60 * SECOND), "notifications unreachable");
    expect(await outbox().claimOutbox("relay-b", 30 * SECOND, 100, new Date(now.getTime() + 10 * SECOND))).toEqual([]);
    // A relay that does not hold the claim cannot mark it dispatched.
    for (const e of rest) await outbox().markDispatched(e.id, "relay-b", now);
    expect(await outbox().outboxBacklog()).toBe(first.length);
    for (const e of rest) await outbox().markDispatched(e.id, "relay-a", now);
    expect(await outbox().outboxBacklog()).toBe(1);
    expect(await outbox().oldestPendingOutboxAt()).toEqual(expect.any(Date));

    const retried = await outbox().claimOutbox("relay-b", 30 * SECOND, 100, new Date(now.getTime() + 61 * SECOND));
    expect(retried.map((e) => [e.id, e.attempts, e.lastError])).toEqual([[deferred.id, deferred.attempts + 1, "notifications unreachable"]]);
    await outbox().markDispatched(deferred.id, "relay-b", now);
    expect(await outbox().outboxBacklog()).toBe(0);
    expect(await outbox().oldestPendingOutboxAt()).toBeNull();
  });

  it("gives an expired lease to another relay (an instance that died mid-dispatch); only the holder's acknowledgement counts", async () => {
    await write();
    const now = new Date(Date.now() + 1000);
    const [claimed] = await outbox().claimOutbox("relay-a", SECOND, 1, now);
    expect(await outbox().claimOutbox("relay-b", SECOND, 1, new Date(now.getTime() + SECOND / 2))).toEqual([]);
    const [taken] = await outbox().claimOutbox("relay-b", SECOND, 1, new Date(now.getTime() + 2 * SECOND));
    expect([taken.id, taken.attempts]).toEqual([claimed.id, claimed.attempts + 1]);
    await outbox().markDispatched(taken.id, "relay-a", now);
    expect(await outbox().outboxBacklog()).toBe(1);
    await outbox().markDispatched(taken.id, "relay-b", now);
    expect(await outbox().outboxBacklog()).toBe(0);
  });

  it("acknowledges a claimed batch in one call: only the holder's events, and only the ones named", async () => {
    for (let i = 0; i < 3; i++) await write();
    const now = new Date(Date.now() + 1000);
    const mine = await outbox().claimOutbox("relay-a", 30 * SECOND, 100, now);
    expect(mine.length).toBeGreaterThanOrEqual(3);
    const [kept, ...acked] = mine;
    // Another relay's acknowledgement of the batch changes nothing.
    await outbox().markBatchDispatched(
      acked.map((e) => e.id),
      "relay-b",
      now,
    );
    expect(await outbox().outboxBacklog()).toBe(mine.length);
    await outbox().markBatchDispatched([], "relay-a", now);
    expect(await outbox().outboxBacklog()).toBe(mine.length);
    await outbox().markBatchDispatched(
      acked.map((e) => e.id),
      "relay-a",
      now,
    );
    expect(await outbox().outboxBacklog()).toBe(1);
    const listed = await outbox().listOutbox({ limit: 100 });
    for (const e of acked) expect(listed.find((l) => l.id === e.id)?.dispatchedAt).toEqual(now);
    expect(listed.find((l) => l.id === kept.id)?.dispatchedAt).toBeNull();
    // The one left out is still held by relay-a until its lease ends, then another relay gets it.
    expect(await outbox().claimOutbox("relay-b", 30 * SECOND, 100, now)).toEqual([]);
    const [retaken] = await outbox().claimOutbox("relay-b", 30 * SECOND, 100, new Date(now.getTime() + 31 * SECOND));
    expect(retaken.id).toBe(kept.id);
    await outbox().markBatchDispatched([retaken.id], "relay-b", now);
    expect(await outbox().outboxBacklog()).toBe(0);
  });

  it("the relay dispatches each event once it is acknowledged, retrying a failed batch and a refused event alone", async () => {
    for (let i = 0; i < 5; i++) await write();
    const seen: number[] = [];
    const batches: number[][] = [];
    let failBatch = true;
    let refused: number | null = null;
    const relay = new OutboxRelay(
      outbox(),
      async (events) => {
        batches.push(events.map((e) => e.id));
        if (failBatch) {
          failBatch = false;
          throw new Error("consumer down");
        }
        // The consumer refuses one event once (a bad payload, say): only that one is retried.
        return events.map((e) => {
          if (refused === null) {
            refused = e.id;
            return "refused once";
          }
          seen.push(e.id);
          return null;
        });
      },
      { relayId: "relay-c", intervalMs: 20, leaseMs: 5000, batchSize: 2, maxBackoffMs: 50, logger: { warn: () => undefined } },
    );
    relay.start();
    try {
      const until = Date.now() + 10_000;
      while ((await outbox().outboxBacklog()) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await relay.stop();
    }
    expect(await outbox().outboxBacklog()).toBe(0);
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    // One dispatch per claim of up to 2 events; the refused event came back in a later claim.
    expect(batches.every((b) => b.length >= 1 && b.length <= 2)).toBe(true);
    expect(batches.filter((b) => b.includes(refused!)).length).toBeGreaterThanOrEqual(2);
  });
}
