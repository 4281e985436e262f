/**
 * Payout runs as the commissions service carries them out (docs/payouts.md): gathering what a run needs from the
 * owners (partners' payout details from programs, minimums from rewards, Stripe accounts and PayPal from the
 * processor), making the run (ledger.createPayoutRun), and the worker that sends a run's Stripe and PayPal API
 * payouts and starts scheduled runs. The rules themselves are pure (./payout-runs.ts); every money move is a ledger
 * function in one transaction.
 */
import type { Context, ServiceBroker } from "moleculer";
import { typedCall } from "../../shared/typed-call";
import type { PayoutRecipient, ProgramsContract } from "../programs/contract";
import type { RewardsContract } from "../rewards/contract";
import * as ledger from "./ledger";
import { nextScheduledRun, periodKeyFor, planPayoutRun, runSettled, runTotals, scheduleDue, type PayoutCandidate } from "./payout-runs";
import type { CommissionsRepository, PayoutMethod, PayoutRun, PayoutRunTrigger, PayoutSchedule, SkippedPartner, Withdrawal } from "./repository";

const call = typedCall<ProgramsContract & RewardsContract>();
type Caller = Context | ServiceBroker;

/**
 * What payout runs ask the processor service (Stripe and PayPal), given by the commissions service from its bus
 * calls: the processor calls commissions too (returnPayout, the sales' settlements), so its contract is not
 * imported here, and the import graph keeps the processor above the ledger.
 */
export interface PayoutProcessor {
  /** The partners' Express accounts (those with one), and whether each can receive transfers. */
  partnerPayoutAccounts(programId: number, partnerIds: number[]): Promise<Array<{ partnerId: number; ready: boolean }>>;
  /** The payout's transfer, made once; throws (retryable) when Stripe cannot be reached. */
  transferPayout(p: PayoutFacts): Promise<TransferOutcome>;
  /** The payout as credit on a Stripe customer's balance, made once; throws (retryable) when Stripe cannot be reached. */
  creditCustomerBalance(p: PayoutFacts & { customerId: string }): Promise<TransferOutcome>;
  paypalConfigured(programId: number): Promise<boolean>;
  /** The run's PayPal batch, made once per run; throws when PayPal refuses it (for good, or retryable). */
  sendPaypalPayouts(p: { programId: number; runId: number; items: Array<{ payoutId: number; email: string; amountCents: number; currency: string }> }): Promise<unknown>;
  paypalPayoutItems(
    programId: number,
    runId: number,
  ): Promise<Array<{ payoutId: number; outcome: "paid" | "failed" | "pending"; itemId: string | null; code: string | null; reason: string | null }>>;
}

/** What the processor is told of a payout it sends, and what it answers. */
type PayoutFacts = { programId: number; partnerId: number; payoutId: number; amountCents: number; currency: string };
type TransferOutcome = { outcome: "paid"; transferId: string } | { outcome: "failed"; code: string; reason: string };
const payoutOf = (p: Withdrawal): PayoutFacts => ({ programId: p.programId, partnerId: p.partnerId, payoutId: p.id, amountCents: p.amountCents, currency: p.currency });

/** After this many transfer attempts that Stripe did not answer, a payout fails with processor_unavailable. */
export const MAX_TRANSFER_ATTEMPTS = 10;

export interface PlannedRun {
  programId: number;
  currency: string;
  periodKey: string;
  existingRunId: number | null;
  totalCents: number;
  payouts: Array<{ partnerId: number; partnerName: string; method: PayoutMethod; amountCents: number; minPayoutCents: number; commissions: number }>;
  skipped: SkippedPartner[];
  /** PayPal payouts go through the PayPal Payouts API (the program has credentials), not into the run's file. */
  paypalApi: boolean;
}

/** Who a run of the program would pay now and who it would skip: reads only. */
export async function planRun(caller: Caller, repo: CommissionsRepository, processor: PayoutProcessor, programId: number, periodKey?: string, now = new Date()): Promise<PlannedRun> {
  const { currency } = await call(caller, "programs.get", { programId });
  const period = periodKey ?? periodKeyFor("manual", now);
  const existing = await repo.transaction((tx) => tx.findPayoutRun(programId, currency, period));
  const available = await availableByPartner(repo, programId, currency);
  const partnerIds = [...available.keys()];
  const base = { programId, currency, periodKey: period, existingRunId: existing?.id ?? null };
  if (!partnerIds.length) return { ...base, totalCents: 0, payouts: [], skipped: [], paypalApi: false };

  const [recipients, minimums] = await Promise.all([call(caller, "programs.payoutRecipients", { programId, partnerIds }), call(caller, "rewards.payoutMinimums", { programId, partnerIds })]);
  const recipientOf = new Map(recipients.map((r) => [r.partnerId, r]));
  const minimumOf = new Map(minimums.map((m) => [m.partnerId, m.minPayoutCents]));
  // A group rewarding with credit (in the merchant's app, or on Stripe customer balances) pays its partners that way, whatever method they chose.
  const creditOf = new Map(minimums.flatMap((m) => (m.rewardAs === "cash" ? [] : [[m.partnerId, m.rewardAs] as const])));
  const stripeIds = recipients.filter((r) => r.payoutMethod === "stripe").map((r) => r.partnerId);
  const accounts = stripeIds.length ? await processor.partnerPayoutAccounts(programId, stripeIds) : [];
  const accountOf = new Map(accounts.map((a) => [a.partnerId, a]));

  const candidates: PayoutCandidate[] = partnerIds.flatMap((partnerId) => {
    const r = recipientOf.get(partnerId);
    // A partner no longer enrolled keeps a balance nobody can pay here; the operator sees it in reconcile's totals.
    if (!r) return [];
    return [
      {
        partnerId,
        currency,
        partnerName: r.name,
        availableCents: available.get(partnerId)!,
        minPayoutCents: minimumOf.get(partnerId) ?? 0,
        status: r.status,
        method: creditOf.get(partnerId) ?? r.payoutMethod,
        detailsComplete: creditOf.has(partnerId) || detailsComplete(r),
        stripeAccount: accountOf.has(partnerId) ? { ready: accountOf.get(partnerId)!.ready } : null,
      },
    ];
  });
  const plan = planPayoutRun(candidates);
  const paypalApi = plan.payouts.some((p) => p.method === "paypal") && (await processor.paypalConfigured(programId));
  const payouts = [];
  for (const p of plan.payouts) {
    const key = { partnerId: p.partnerId, programId, currency };
    const commissions = (await repo.transaction((tx) => tx.listPayableCommissions(key))).length;
    payouts.push({ ...p, minPayoutCents: minimumOf.get(p.partnerId) ?? 0, commissions });
  }
  return { ...base, totalCents: payouts.reduce((sum, p) => sum + p.amountCents, 0), payouts, skipped: plan.skipped, paypalApi };
}

const detailsComplete = (r: PayoutRecipient) => (r.payoutMethod === "paypal" ? !!r.paypalEmail : r.payoutMethod === "bank" ? !!(r.bank?.iban || r.bank?.accountNumber) : true);

/** Each partner's balance minus their open and processing payouts, for those with a balance row in the currency. */
async function availableByPartner(repo: CommissionsRepository, programId: number, currency: string): Promise<Map<number, number>> {
  const [balances, unsettled] = await Promise.all([repo.programBalances(programId, currency), repo.unsettledWithdrawalCents(programId, currency)]);
  return new Map(balances.map((b) => [b.partnerId, b.balanceCents - (unsettled.get(b.partnerId) ?? 0)]));
}

/** Plans and makes the run (idempotent on its period); a run already made for the period is returned as it is. */
export async function startRun(
  caller: Caller,
  repo: CommissionsRepository,
  processor: PayoutProcessor,
  input: { programId: number; periodKey?: string; expectedTotalCents?: number; trigger: PayoutRunTrigger },
  now = new Date(),
): Promise<{ run: PayoutRun; created: boolean }> {
  const plan = await planRun(caller, repo, processor, input.programId, input.periodKey, now);
  return repo.transaction((tx) =>
    ledger.createPayoutRun(
      tx,
      {
        programId: plan.programId,
        currency: plan.currency,
        periodKey: plan.periodKey,
        trigger: input.trigger,
        payouts: plan.payouts,
        skipped: plan.skipped,
        expectedTotalCents: input.expectedTotalCents,
        paypalApi: plan.paypalApi,
      },
      now,
    ),
  );
}

/** A run as the API shows it: with its totals, and its payouts with the partners' names when `withPayouts`. */
export async function runView(caller: Caller, repo: CommissionsRepository, run: PayoutRun, withPayouts: boolean) {
  const payouts = await repo.listRunPayouts(run.id);
  const view = { ...run, totals: runTotals(payouts) };
  if (!withPayouts) return view;
  const names = await partnerNames(caller, run.programId, payouts);
  return { ...view, payouts: payouts.map((p) => ({ ...p, partnerName: names.get(p.partnerId) ?? `Partner ${p.partnerId}` })) };
}

async function partnerNames(caller: Caller, programId: number, payouts: readonly Withdrawal[]): Promise<Map<number, string>> {
  const partnerIds = [...new Set(payouts.map((p) => p.partnerId))];
  if (!partnerIds.length) return new Map();
  return new Map((await call(caller, "programs.payoutRecipients", { programId, partnerIds })).map((r) => [r.partnerId, r.name]));
}

/** The program's schedule as the API shows it, with when it next starts a run. */
export function scheduleView(s: PayoutSchedule, now = new Date()) {
  const next = nextScheduledRun(s, now);
  return { programId: s.programId, kind: s.kind, dayOfMonth: s.dayOfMonth, weekday: s.weekday, nextRunAt: next?.toISOString() ?? null };
}

export const MANUAL_SCHEDULE = (programId: number): PayoutSchedule => ({ programId, kind: "manual", dayOfMonth: null, weekday: null, updatedAt: new Date(0) });

export interface PayoutWorker {
  /** Runs one pass now (after a run is made), unless one is under way. */
  nudge(): void;
  stop(): Promise<void>;
}

/**
 * Every `intervalMs`: starts the runs scheduled for now, sends the open (or stalled) Stripe payouts of the runs
 * still processing, one transfer at a time, and completes runs with nothing left open or processing. Safe with
 * several instances: a payout is claimed in a transaction before its transfer (ledger.claimTransfer), and a
 * transfer is found by its group before another is made (processor.transferPayout), so a crash at any point
 * leads to one transfer, never two (docs/payouts.md).
 */
export function startPayoutWorker(
  broker: ServiceBroker,
  repo: CommissionsRepository,
  logger: ServiceBroker["logger"],
  processor: PayoutProcessor,
  options: { intervalMs: number; claimMs: number; onSettled: () => void },
): PayoutWorker {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  const pass = async () => {
    const now = new Date();
    for (const schedule of await repo.listActivePayoutSchedules()) {
      if (stopped || !scheduleDue(schedule, now)) continue;
      await startRun(broker, repo, processor, { programId: schedule.programId, periodKey: periodKeyFor(schedule.kind, now), trigger: "schedule" }, now).then(
        ({ run, created }) => created && logger.info(`Scheduled payout run ${run.id} (${run.periodKey}) of program ${run.programId} started.`),
        (err) => logger.warn(`The scheduled payout run of program ${schedule.programId} could not start.`, err),
      );
    }
    for (const run of await repo.listProcessingPayoutRuns(100)) {
      const unsettled = (await repo.listRunPayouts(run.id)).filter((p) => (p.status === "open" || p.status === "processing") && ledger.sentByWorker(p));
      for (const payout of unsettled) {
        if (stopped) return;
        if (payout.method === "stripe") await sendTransfer(payout);
        else if (payout.method === "account_credit" || payout.method === "stripe_balance") await creditAccount(payout);
      }
      const paypal = unsettled.filter((p) => p.method === "paypal");
      if (paypal.length && !stopped) await sendPaypalBatch(run, paypal).catch((err) => logger.warn(`The PayPal payouts of run ${run.id} wait for the next pass.`, err));
      if (runSettled(await repo.listRunPayouts(run.id))) await repo.transaction((tx) => tx.completePayoutRun(run.id, new Date()));
    }
  };

  /**
   * A run's PayPal payouts through the PayPal Payouts API: claimed, sent as one batch (the processor makes one per
   * run, whatever the retries: it is named after the run), then settled by what PayPal says of each item; items
   * PayPal still holds (unclaimed, pending) stay processing until a later pass. The batch is made once, with the
   * payouts of its first sending: so it is sent only by a pass that holds every one of the run's open PayPal payouts
   * (a run makes them all at once); a pass that cannot claim one of them (another instance holds it) waits.
   */
  const sendPaypalBatch = async (run: PayoutRun, payouts: Withdrawal[]) => {
    const now = new Date();
    const claimed: Withdrawal[] = [];
    for (const p of payouts) {
      if (p.status === "processing") claimed.push(p);
      else {
        const c = await repo.transaction((tx) => ledger.claimTransfer(tx, p.id, now, new Date(now.getTime() - options.claimMs)));
        if (!c) return;
        claimed.push(c);
      }
    }
    const partnerIds = [...new Set(claimed.map((p) => p.partnerId))];
    const emailOf = new Map((await call(broker, "programs.payoutRecipients", { programId: run.programId, partnerIds })).map((r) => [r.partnerId, r.paypalEmail]));
    const fail = async (ids: number[], failure: { code: string; reason: string }) => {
      for (const id of ids) await repo.transaction((tx) => ledger.failWithdrawal(tx, id, failure, new Date()));
      if (ids.length) options.onSettled();
    };
    // A partner who removed their PayPal email since the run was made cannot be paid by PayPal: failed, payable again.
    await fail(
      claimed.filter((p) => !emailOf.get(p.partnerId)).map((p) => p.id),
      { code: "payout_details_missing", reason: "The partner's PayPal email is missing: set it in the portal, and the next run pays it." },
    );
    const items = claimed.flatMap((p) => {
      const email = emailOf.get(p.partnerId);
      return email ? [{ payoutId: p.id, email, amountCents: p.amountCents, currency: p.currency }] : [];
    });
    if (!items.length) return;
    try {
      await processor.sendPaypalPayouts({ programId: run.programId, runId: run.id, items });
    } catch (err) {
      const e = err as { retryable?: boolean; type?: string; message?: string; data?: { code?: string; reason?: string } };
      if (e.retryable || e.type === "processor_unavailable") throw err;
      // PayPal refused the batch for good (insufficient funds, credentials no longer valid): each payout of it fails
      // with PayPal's own name and words.
      await fail(
        items.map((i) => i.payoutId),
        { code: e.data?.code ?? e.type ?? "paypal_refused", reason: e.data?.reason ?? e.message ?? "PayPal refused the payouts." },
      );
      return;
    }
    for (const item of await processor.paypalPayoutItems(run.programId, run.id)) {
      if (item.outcome === "pending" || !claimed.some((p) => p.id === item.payoutId)) continue;
      const at = new Date();
      if (item.outcome === "paid") await repo.transaction((tx) => ledger.payWithdrawal(tx, item.payoutId, at, item.itemId));
      else await repo.transaction((tx) => ledger.failWithdrawal(tx, item.payoutId, { code: item.code ?? "paypal_failed", reason: item.reason ?? "PayPal did not pay this item." }, at));
      options.onSettled();
    }
  };

  const sendTransfer = async (payout: Withdrawal) => {
    const now = new Date();
    const claimed = await repo.transaction((tx) => ledger.claimTransfer(tx, payout.id, now, new Date(now.getTime() - options.claimMs)));
    if (!claimed) return;
    const outcome = await attempt(claimed, () => processor.transferPayout(payoutOf(claimed)), "transfer");
    if (!outcome) return;
    if (outcome.outcome === "paid") await repo.transaction((tx) => ledger.payWithdrawal(tx, claimed.id, new Date(), outcome.transferId));
    else await repo.transaction((tx) => ledger.failWithdrawal(tx, claimed.id, { code: outcome.code, reason: outcome.reason }, new Date()));
    options.onSettled();
  };

  /**
   * A credit payout: account credit is paid at once and the merchant told what to credit (reward.earned, in the same
   * transaction); Stripe balance credit is made first (once, whatever the retries), then paid and told as applied.
   */
  const creditAccount = async (payout: Withdrawal) => {
    const now = new Date();
    const claimed = await repo.transaction((tx) => ledger.claimTransfer(tx, payout.id, now, new Date(now.getTime() - options.claimMs)));
    if (!claimed) return;
    const fail = async (failure: { code: string; reason: string }) => {
      await repo.transaction((tx) => ledger.failWithdrawal(tx, claimed.id, failure, new Date()));
      options.onSettled();
    };
    const recipient = await call(broker, "programs.creditRecipient", { programId: claimed.programId, partnerId: claimed.partnerId }).catch((err: unknown) => {
      if ((err as { type?: string } | null)?.type === "not_found") return null;
      throw err;
    });
    if (!recipient) return fail({ code: "partner_not_enrolled", reason: "The partner is no longer enrolled in the program: there is nobody to credit." });
    let stripeBalanceTransactionId: string | null = null;
    if (claimed.method === "stripe_balance") {
      const customerId = recipient.stripeCustomerId;
      if (!customerId) return fail({ code: "stripe_customer_missing", reason: "The partner has no stripe_customer_id metadata: set it (the partners API), and the next run credits them." });
      const outcome = await attempt(claimed, () => processor.creditCustomerBalance({ ...payoutOf(claimed), customerId }), "credit");
      if (!outcome) return;
      if (outcome.outcome === "failed") return fail(outcome);
      stripeBalanceTransactionId = outcome.transferId;
    }
    const told = { tenantId: recipient.tenantId, email: recipient.email, stripeBalanceTransactionId };
    await repo.transaction((tx) => ledger.payAsAccountCredit(tx, claimed.id, told, new Date(), stripeBalanceTransactionId ?? `credit_${claimed.id}`));
    options.onSettled();
  };

  /**
   * A processor call for a claimed payout: its outcome, or null when it was not answered (Stripe unreachable or 5xx,
   * the processor service away): tried again on a later pass, up to the limit, then failed with processor_unavailable.
   */
  const attempt = async (claimed: Withdrawal, request: () => Promise<TransferOutcome>, what: string): Promise<TransferOutcome | null> => {
    try {
      return await request();
    } catch (err) {
      logger.warn(`The ${what} of payout ${claimed.id} was not made (attempt ${claimed.attempts}); it will be tried again.`, err);
      if (claimed.attempts < MAX_TRANSFER_ATTEMPTS) return null;
      return { outcome: "failed", code: "processor_unavailable", reason: `Stripe could not be reached after ${claimed.attempts} attempts: ${(err as Error).message}` };
    }
  };

  const run = () => {
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .catch((err) => logger.warn("A payout pass failed; the next one tries again.", err))
      .finally(() => {
        running = null;
        if (again && !stopped) {
          again = false;
          run();
        }
      });
  };
  const timer = setInterval(run, options.intervalMs);
  timer.unref();
  return {
    nudge: run,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
