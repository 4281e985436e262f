import { createProcessorRepository, type ProcessorRepository } from "../../services/processor/repository";
import { at, backends, counter, SECOND, useRepository } from "./harness";

const unique = counter();

describe.each(backends)("processor repository contract on %s", (_name, backend) => {
  const repo = useRepository<ProcessorRepository>(backend, createProcessorRepository);
  const LEASE = 60 * SECOND;

  it("claims a new event once; a busy claim is refused until its lease expires", async () => {
    const e = { eventId: `evt_${unique()}`, type: "charge.refunded", programId: 1 };
    const first = await repo().claimEvent(e, LEASE, at(0));
    expect(first).toMatchObject({ claimed: true, event: { eventId: e.eventId, status: "processing", attempts: 1, programId: 1, type: e.type } });
    expect(await repo().claimEvent(e, LEASE, at(SECOND))).toMatchObject({ claimed: false, event: { status: "processing" } });
    expect(await repo().claimEvent(e, LEASE, at(LEASE + SECOND))).toMatchObject({ claimed: true, event: { attempts: 2 } });
  });

  it("a released (failed) event is claimed again; a processed one never", async () => {
    const e = { eventId: `evt_${unique()}`, type: "checkout.session.completed", programId: 2 };
    await repo().claimEvent(e, LEASE, at(0));
    await repo().releaseEvent(e.eventId, "sale not found");
    expect(await repo().getEvent(e.eventId)).toMatchObject({ status: "failed", lastError: "sale not found", claimedUntil: null });
    expect(await repo().claimEvent(e, LEASE, at(SECOND))).toMatchObject({ claimed: true, event: { attempts: 2 } });
    await repo().finishEvent(e.eventId, "processed", { saleId: 7 }, at(2 * SECOND));
    expect(await repo().claimEvent(e, LEASE, at(LEASE * 10))).toMatchObject({ claimed: false, event: { status: "processed", outcome: { saleId: 7 }, processedAt: at(2 * SECOND) } });
  });

  it("concurrent deliveries of one event: exactly one claim", async () => {
    const e = { eventId: `evt_${unique()}`, type: "refund.created", programId: 3 };
    const results = await Promise.all(Array.from({ length: 8 }, () => repo().claimEvent(e, LEASE, at(0))));
    expect(results.filter((r) => r.claimed)).toHaveLength(1);
  });

  it("payment links keep the first sale of a reference, per program", async () => {
    const ref = `pi_${unique()}`;
    await repo().linkPayment({ programId: 1, reference: ref, transactionId: "cs_1", saleAmountCents: 100, chargedAmountCents: 120 });
    await repo().linkPayment({ programId: 1, reference: ref, transactionId: "cs_2", saleAmountCents: 5, chargedAmountCents: 5 });
    expect(await repo().findPayment(1, ref)).toEqual({ programId: 1, reference: ref, transactionId: "cs_1", saleAmountCents: 100, chargedAmountCents: 120 });
    expect(await repo().findPayment(2, ref)).toBeNull();
  });

  it("refunds are recorded once by id and listed in the processor's order", async () => {
    const tx = `cs_${unique()}`;
    await repo().recordRefund({ programId: 1, refundId: "re_b", transactionId: tx, amountCents: 200, kind: "refund", createdAt: at(2 * SECOND) });
    await repo().recordRefund({ programId: 1, refundId: "re_a", transactionId: tx, amountCents: 100, kind: "refund", createdAt: at(SECOND) });
    await repo().recordRefund({ programId: 1, refundId: "re_a", transactionId: tx, amountCents: 999, kind: "refund", createdAt: at(0) });
    await repo().recordRefund({ programId: 1, refundId: "dp_c", transactionId: tx, amountCents: 300, kind: "dispute", createdAt: at(3 * SECOND) });
    expect((await repo().listRefunds(1, tx)).map((r) => [r.refundId, r.amountCents, r.kind])).toEqual([
      ["re_a", 100, "refund"],
      ["re_b", 200, "refund"],
      ["dp_c", 300, "dispute"],
    ]);
    expect(await repo().listRefunds(2, tx)).toEqual([]);
  });
});
