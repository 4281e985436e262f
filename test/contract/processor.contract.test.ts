import { createProcessorRepository } from "../../services/processor/storage";
import type { ProcessorRepository } from "../../services/processor/repository";
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

  it("every reference of a sale is listed; aliases are kept both ways, per program", async () => {
    const tx = `cs_${unique()}`;
    for (const reference of [tx, `pi_${unique()}`, `in_${unique()}`]) {
      await repo().linkPayment({ programId: 1, reference, transactionId: tx, saleAmountCents: 100, chargedAmountCents: 100 });
    }
    expect((await repo().listPaymentReferences(1, tx)).sort()).toHaveLength(3);
    expect(await repo().listPaymentReferences(2, tx)).toEqual([]);
    const [a, b, c] = [`in_${unique()}`, `pi_${unique()}`, `ch_${unique()}`];
    await repo().addAlias(1, a, b);
    await repo().addAlias(1, a, b);
    await repo().addAlias(1, c, a);
    expect((await repo().listAliases(1, a)).sort()).toEqual([b, c].sort());
    expect(await repo().listAliases(1, b)).toEqual([a]);
    expect(await repo().listAliases(2, a)).toEqual([]);
  });

  it("a movement keeps its newest report; a final status is never overwritten; matched by charge or payment intent", async () => {
    const [charge, intent] = [`ch_${unique()}`, `pi_${unique()}`];
    const refund = { programId: 1, movementId: `re_${unique()}`, kind: "refund" as const, chargeId: charge, paymentIntentId: intent, amountCents: 300, createdAt: at(0) };
    expect(await repo().recordMovement({ ...refund, status: "pending", statusAt: at(SECOND) })).toBe(true);
    expect(await repo().recordMovement({ ...refund, status: "succeeded", statusAt: at(3 * SECOND) })).toBe(true);
    // An older report arriving late changes nothing.
    expect(await repo().recordMovement({ ...refund, status: "pending", statusAt: at(2 * SECOND) })).toBe(false);
    expect(await repo().recordMovement({ ...refund, status: "failed", statusAt: at(4 * SECOND) })).toBe(true);
    expect(await repo().recordMovement({ ...refund, status: "succeeded", statusAt: at(9 * SECOND) })).toBe(false);
    const dispute = {
      programId: 1,
      movementId: `dp_${unique()}`,
      kind: "dispute" as const,
      chargeId: charge,
      paymentIntentId: null,
      amountCents: 700,
      status: "needs_response",
      createdAt: at(0),
      statusAt: at(0),
    };
    await repo().recordMovement(dispute);
    const byCharge = await repo().listMovements(1, [charge]);
    // In the order of their latest news.
    expect(byCharge.map((m) => [m.movementId, m.status, m.amountCents, m.kind])).toEqual([
      [dispute.movementId, "needs_response", 700, "dispute"],
      [refund.movementId, "failed", 300, "refund"],
    ]);
    expect(byCharge[1]).toEqual({ ...refund, status: "failed", statusAt: at(4 * SECOND) });
    expect((await repo().listMovements(1, [intent])).map((m) => m.movementId)).toEqual([refund.movementId]);
    expect(await repo().listMovements(2, [charge, intent])).toEqual([]);
    expect(await repo().listMovements(1, [])).toEqual([]);
  });

  it("concurrent reports of one movement: it ends at the final one", async () => {
    const base = { programId: 3, movementId: `dp_${unique()}`, kind: "dispute" as const, chargeId: `ch_${unique()}`, paymentIntentId: null, amountCents: 10, createdAt: at(0) };
    const statuses = ["needs_response", "under_review", "won", "needs_response", "under_review"];
    await Promise.all(statuses.map((status, i) => repo().recordMovement({ ...base, status, statusAt: at(i * SECOND) })));
    expect((await repo().listMovements(3, [base.chargeId]))[0].status).toBe("won");
  });

  it("a sale's revision only grows, once per call, also concurrently", async () => {
    const tx = `cs_${unique()}`;
    expect(await repo().nextRevision(1, tx)).toBe(1);
    const revisions = await Promise.all(Array.from({ length: 8 }, () => repo().nextRevision(1, tx)));
    expect(revisions.sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await repo().nextRevision(2, tx)).toBe(1);
  });

  it("lists events newest first, by status", async () => {
    const e = { eventId: `evt_${unique()}`, type: "refund.created", programId: 1 };
    await repo().claimEvent(e, LEASE, at(5 * SECOND));
    await repo().finishEvent(e.eventId, "rejected", { reason: "rejected: bad data" }, at(6 * SECOND));
    const rejected = await repo().listEvents({ status: "rejected", limit: 10 });
    expect(rejected.find((r) => r.eventId === e.eventId)).toMatchObject({ status: "rejected", outcome: { reason: "rejected: bad data" } });
    expect((await repo().listEvents({ limit: 1 })).length).toBe(1);
  });

  it("keeps one restricted key per program: a new key replaces the old and clears its failure; a failure noted for a replaced key is dropped", async () => {
    const programId = 100_000 + unique();
    expect(await repo().getApiKey(programId)).toBeNull();
    await repo().setApiKey(programId, "rk_test_first", at(0));
    await repo().markApiKeyFailed(programId, "rk_test_first", "Invalid API Key provided", at(SECOND));
    expect(await repo().getApiKey(programId)).toEqual({ programId, apiKey: "rk_test_first", setAt: at(0), failedAt: at(SECOND), failure: "Invalid API Key provided" });
    await repo().setApiKey(programId, "rk_test_second", at(2 * SECOND));
    await repo().markApiKeyFailed(programId, "rk_test_first", "late news of the old key", at(3 * SECOND));
    expect(await repo().getApiKey(programId)).toEqual({ programId, apiKey: "rk_test_second", setAt: at(2 * SECOND), failedAt: null, failure: null });
    await Promise.all([repo().setApiKey(programId + 1, "rk_test_a", at(0)), repo().setApiKey(programId + 1, "rk_test_b", at(0))]);
    expect(["rk_test_a", "rk_test_b"]).toContain((await repo().getApiKey(programId + 1))!.apiKey);
    await repo().setApiKey(programId, null, at(4 * SECOND));
    expect(await repo().getApiKey(programId)).toBeNull();
  });

  it("finds a program's newest event of a platform, whatever its status; never another program's or one of no program", async () => {
    const programId = 200_000 + unique();
    expect(await repo().lastEventOfProgram(programId, "stripe")).toBeNull();
    const older = { eventId: `evt_${unique()}`, type: "account.updated", programId };
    const newer = { eventId: `evt_${unique()}`, type: "refund.created", programId };
    await repo().claimEvent(older, LEASE, at(SECOND));
    await repo().releaseEvent(older.eventId, "programs unavailable");
    await repo().claimEvent(newer, LEASE, at(3 * SECOND));
    await repo().claimEvent({ eventId: `evt_${unique()}`, type: "charge.refunded", programId: programId + 1 }, LEASE, at(4 * SECOND));
    await repo().claimEvent({ eventId: `evt_${unique()}`, type: "charge.refunded", programId: null }, LEASE, at(5 * SECOND));
    expect(await repo().lastEventOfProgram(programId, "stripe")).toMatchObject({ eventId: newer.eventId, status: "processing", receivedAt: at(3 * SECOND), outcome: null });
    await repo().finishEvent(newer.eventId, "rejected", { reason: "rejected: bad data" }, at(6 * SECOND));
    expect(await repo().lastEventOfProgram(programId, "stripe")).toEqual({
      eventId: newer.eventId,
      type: "refund.created",
      programId,
      status: "rejected",
      attempts: 1,
      claimedUntil: null,
      receivedAt: at(3 * SECOND),
      processedAt: at(6 * SECOND),
      lastError: null,
      outcome: { reason: "rejected: bad data" },
    });
    // A retry of the older event does not make it the newest: received is when it first arrived.
    expect(await repo().claimEvent(older, LEASE, at(7 * SECOND))).toMatchObject({ claimed: true, event: { attempts: 2 } });
    expect((await repo().lastEventOfProgram(programId, "stripe"))!.eventId).toBe(newer.eventId);
    // Each billing platform's screen shows its own newest event.
    expect(await repo().lastEventOfProgram(programId, "paddle")).toBeNull();
    const paddle = { eventId: `paddle:evt_${unique()}`, type: "transaction.completed", programId };
    await repo().claimEvent(paddle, LEASE, at(8 * SECOND));
    expect((await repo().lastEventOfProgram(programId, "paddle"))!.eventId).toBe(paddle.eventId);
    expect((await repo().lastEventOfProgram(programId, "stripe"))!.eventId).toBe(newer.eventId);
  });

  it("keeps one webhook signing secret per program: a new one replaces the old; removed, it is gone", async () => {
    const programId = 300_000 + unique();
    expect(await repo().getWebhookSecret(programId)).toBeNull();
    await repo().setWebhookSecret(programId, "whsec_first", at(0));
    expect(await repo().getWebhookSecret(programId)).toEqual({ programId, signingSecret: "whsec_first", setAt: at(0) });
    await repo().setWebhookSecret(programId, "whsec_second", at(SECOND));
    expect(await repo().getWebhookSecret(programId)).toEqual({ programId, signingSecret: "whsec_second", setAt: at(SECOND) });
    expect(await repo().getWebhookSecret(programId + 1)).toBeNull();
    await Promise.all([repo().setWebhookSecret(programId + 1, "whsec_a", at(0)), repo().setWebhookSecret(programId + 1, "whsec_b", at(0))]);
    expect(["whsec_a", "whsec_b"]).toContain((await repo().getWebhookSecret(programId + 1))!.signingSecret);
    await repo().setWebhookSecret(programId, null, at(2 * SECOND));
    expect(await repo().getWebhookSecret(programId)).toBeNull();
    expect(await repo().getWebhookSecret(programId + 1)).not.toBeNull();
  });

  it("keeps one Paddle connection per program: each change sets only what it names; a new API key clears its failure", async () => {
    const programId = 400_000 + unique();
    expect(await repo().getPaddleConnection(programId)).toBeNull();
    const empty = { apiKey: null, apiKeySetAt: null, apiKeyFailedAt: null, apiKeyFailure: null };
    expect(await repo().setPaddleConnection(programId, { secretKey: "pdl_ntfset_one" }, at(0))).toEqual({
      programId,
      environment: "live",
      secretKey: "pdl_ntfset_one",
      secretSetAt: at(0),
      ...empty,
    });
    await repo().setPaddleConnection(programId, { environment: "sandbox" }, at(SECOND));
    await repo().setPaddleConnection(programId, { apiKey: "pdl_sdbx_apikey_1" }, at(2 * SECOND));
    await repo().markPaddleApiKeyFailed(programId, "pdl_sdbx_apikey_1", "forbidden", at(3 * SECOND));
    await repo().markPaddleApiKeyFailed(programId, "pdl_sdbx_apikey_other", "ignored", at(4 * SECOND));
    expect(await repo().getPaddleConnection(programId)).toEqual({
      programId,
      environment: "sandbox",
      secretKey: "pdl_ntfset_one",
      secretSetAt: at(0),
      apiKey: "pdl_sdbx_apikey_1",
      apiKeySetAt: at(2 * SECOND),
      apiKeyFailedAt: at(3 * SECOND),
      apiKeyFailure: "forbidden",
    });
    await repo().setPaddleConnection(programId, { apiKey: "pdl_sdbx_apikey_2" }, at(5 * SECOND));
    expect(await repo().getPaddleConnection(programId)).toMatchObject({ apiKey: "pdl_sdbx_apikey_2", apiKeySetAt: at(5 * SECOND), apiKeyFailedAt: null, apiKeyFailure: null });
    expect(await repo().setPaddleConnection(programId, { secretKey: null, apiKey: null }, at(6 * SECOND))).toEqual({
      programId,
      environment: "sandbox",
      secretKey: null,
      secretSetAt: null,
      ...empty,
    });
    expect(await repo().getPaddleConnection(programId + 1)).toBeNull();
    await Promise.all([repo().setPaddleConnection(programId + 1, { secretKey: "pdl_ntfset_a" }, at(0)), repo().setPaddleConnection(programId + 1, { environment: "sandbox" }, at(0))]);
    expect(await repo().getPaddleConnection(programId + 1)).toMatchObject({ secretKey: "pdl_ntfset_a", environment: "sandbox" });
  });
});
