import { inputValidator, type Input } from "../shared/endpoint";
import type { Context, ServiceBroker, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { checkLedgerInvariants } from "./commissions/invariants";
import { withConversionDrift, withRollupDrift } from "./commissions/invariants/rollups";
import { toMajorUnits } from "../shared/domain/money";
import { call, type ResultOf } from "./bus";
import { toDto } from "../shared/dto";
import { NotFoundError } from "../shared/errors";
import { created, programResourceLocation } from "../shared/meta";
import { APP_METRICS, registerMetric } from "../shared/observability";
import { countMetric, METRICS } from "../shared/metrics";
import { getProgram, programCacheMixin } from "./clients/program-cache";
import { answerStats } from "../shared/stats-input";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import * as ledger from "./commissions/ledger";
import { startServiceOutboxRelay, type ServiceOutboxRelay } from "./clients/outbox-relay";
import { createCommissionsRepository } from "./commissions/storage";
import type { BalanceKey, Commission, CommissionsRepository, FraudReview, PayoutRun } from "./commissions/repository";
import * as payouts_ from "./commissions/payouts";
import { COMMISSIONS } from "./commissions/endpoints";
import { createForLead, createForSale, manualCommission, type CreatedCommission, type NoCommission } from "./commissions/create-for-sale";
import { partnerRewards, partnerRewardsCacheMixin } from "./clients/partner-rewards-cache";
import { reversalApplied, reverseForSale, type RefundResponse } from "./commissions/reverse-for-sale";
import * as S from "./commissions/schemas";
import { commissionListItem, withdrawalListItem } from "./commissions/list-views";
import { BANK_FILE_CSV, COMMISSIONS_CSV, PAYPAL_FILE_CSV, RUN_PAYOUTS_CSV, STATEMENT_CSV, WITHDRAWALS_CSV, type RunFileRow } from "./commissions/export";
import { readExportBatch, readExportLines, type CsvLayout, type ExportBatch } from "../shared/csv-export";
import { mapPage, pageOf } from "../shared/pagination";
import { checkConversion, NO_FRAUD_CHECK, type ConversionToCheck, type FraudCheck } from "./commissions/fraud-check";
import { anyFraudRuleEnabled, rejectionForPartner, type FraudSettings } from "../shared/domain/fraud-rules";
import { fraudReviewView } from "./commissions/list-views";

/** Violations a reconcile report lists at most (the rest are counted). */
const RECONCILE_MAX_VIOLATIONS = 1000;

export type { CreatedCommission } from "./commissions/create-for-sale";
export type { RefundResponse } from "./commissions/reverse-for-sale";

type ListCommissions = Input<typeof S.ListCommissionsInput>;
type ListWithdrawals = Input<typeof S.ListWithdrawalsInput>;
type Methods = {
  fraudCheck(ctx: Context, conversion: ConversionToCheck): Promise<FraudCheck>;
  fraudReviewViews(ctx: Context, reviews: FraudReview[]): Promise<Array<ReturnType<typeof fraudReviewView>>>;
  decideFraudReview(ctx: Context, programId: number, reviewId: number, decision: ledger.ReviewDecision): Promise<{ review: ReturnType<typeof fraudReviewView>; changed: boolean }>;
  commissionCreated(result: CreatedCommission | NoCommission): CreatedCommission | NoCommission;
  balanceKey(ctx: Context, input: { partnerId: number; programId: number; currency?: string }): Promise<BalanceKey>;
  listCommissions(ctx: Context, input: ListCommissions): Promise<ResultOf<"commissions.list">>;
  listWithdrawals(ctx: Context, input: ListWithdrawals): Promise<ResultOf<"commissions.listWithdrawals">>;
  programRun(programId: number, runId: number): Promise<PayoutRun>;
  programCommission(programId: number, commissionId: number): Promise<Commission>;
  setHeld(programId: number, commissionId: number, hold: { reason: string } | null): Promise<{ commission: ReturnType<typeof commissionListItem>; changed: boolean }>;
  runFileBatch(ctx: Context<Input<typeof S.ExportPayoutRunInput>>, layout: CsvLayout<RunFileRow>, method: "bank" | "paypal" | null): Promise<ExportBatch>;
};
type Vars = StorageVars<CommissionsRepository> & { relay: ServiceOutboxRelay; payoutWorker: payouts_.PayoutWorker; approvalTimer?: NodeJS.Timeout; backlogTimer?: NodeJS.Timeout };

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

/** The processor's actions payout runs use, as bus calls (commissions/payouts.ts says why they are given, not imported). */
const payoutProcessor = (caller: Context | ServiceBroker): payouts_.PayoutProcessor => ({
  partnerPayoutAccounts: (programId, partnerIds) => call(caller, "processor.partnerPayoutAccounts", { programId, partnerIds }),
  transferPayout: (p) => call(caller, "processor.transferPayout", p),
  creditCustomerBalance: (p) => call(caller, "processor.creditCustomerBalance", p),
  paypalConfigured: async (programId) => (await call(caller, "processor.paypalPayoutsConfigured", { programId })).configured,
  sendPaypalPayouts: (p) => call(caller, "processor.sendPaypalPayouts", p),
  paypalPayoutItems: (programId, runId) => call(caller, "processor.paypalPayoutItems", { programId, runId }),
});

/** Owns commissions, refunds, partner balances, withdrawals and the commissions outbox. */
const CommissionsService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "commissions",
  mixins: [storageMixin(createCommissionsRepository), programCacheMixin, partnerRewardsCacheMixin],

  // Params are validated against each action's declared input (commissions/endpoints.ts, shared/endpoint.ts).
  hooks: { before: { "*": inputValidator(COMMISSIONS) } },

  actions: {
    /** Creates the sale's commission by the partner's rewards now, frozen on the record (docs/rewards.md). Idempotent per sale. */
    createForSale: {
      // Safe to send again: if its node is lost mid-call, the caller retries it on another instance (shared/failover.ts).
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.CreateForSaleInput>>): Promise<CreatedCommission | NoCommission> {
        const input = ctx.params;
        const earning = await partnerRewards(ctx, input.programId, input.partnerId);
        const now = new Date();
        const conversion = { ...input, kind: "sale" as const, occurredAt: input.occurredAt ?? now, customerEmail: input.customerEmail ?? null, clickId: input.clickId ?? null };
        return this.commissionCreated(await createForSale(this.repo, earning, input, now, () => this.fraudCheck(ctx, conversion)));
      },
    },

    /** The lead reward of the partner's group for an attributed lead, once per customer (docs/rewards.md). */
    createForLead: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.CreateForLeadInput>>): Promise<CreatedCommission | NoCommission> {
        const { programId, partnerId, customerKey, customerEmail, clickId } = ctx.params;
        const [earning, program] = await Promise.all([partnerRewards(ctx, programId, partnerId), getProgram(ctx, programId)]);
        const now = new Date();
        const conversion = { programId, partnerId, kind: "lead" as const, occurredAt: now, customerEmail: customerEmail ?? null, clickId: clickId ?? null };
        return this.commissionCreated(
          await createForLead(this.repo, earning, { programId, partnerId, customerKey, currency: program.currency }, now, () => this.fraudCheck(ctx, conversion)),
        );
      },
    },

    /** The program's reviews, as the Risk screen lists them (docs/fraud.md). */
    listFraudReviews: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ListFraudReviewsInput>>) {
        const page = await this.repo.listFraudReviewsPage(ctx.params);
        return { data: await this.fraudReviewViews(ctx, page.data), nextCursor: page.nextCursor };
      },
    },

    clearFraudReview: {
      async handler(ctx: Context<Input<typeof S.ClearFraudReviewInput>>) {
        return this.decideFraudReview(ctx, ctx.params.programId, ctx.params.reviewId, { status: "cleared" });
      },
    },

    rejectFraudReview: {
      async handler(ctx: Context<Input<typeof S.RejectFraudReviewInput>>) {
        const { programId, reviewId, reason } = ctx.params;
        const review = await this.repo.getFraudReview(reviewId);
        if (!review || review.programId !== programId) throw new NotFoundError(`No fraud review ${reviewId} in program ${programId}.`);
        return this.decideFraudReview(ctx, programId, reviewId, { status: "rejected", reason: rejectionForPartner(review.flags, reason) });
      },
    },

    /** One commission of the program, as the list shows it. */
    getProgramCommission: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramCommissionInput>>) {
        const { programId, commissionId } = ctx.params;
        const commission = await this.programCommission(programId, commissionId);
        return commissionListItem({ ...commission, refunds: await this.repo.listRefunds(commissionId) });
      },
    },

    /** The merchant takes back a commission in full, with a reason (ledger.reverseCommission; voiding it again is skipped). */
    voidCommission: {
      async handler(ctx: Context<Input<typeof S.VoidCommissionInput>>): Promise<RefundResponse> {
        const { programId, commissionId, reason } = ctx.params;
        await this.programCommission(programId, commissionId);
        const response = await reverseForSale(this.repo, { commissionId, reasonCode: "void", reason }, new Date());
        if (reversalApplied(response)) this.relay.nudge();
        return response;
      },
    },

    /**
     * A banned partner's commissions not yet credited, voided one by one (each its own transaction; a retry skips those
     * done); those held for review by rejecting their review (ledger.voidForBan).
     */
    voidUncredited: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.VoidUncreditedInput>>) {
        const { programId, partnerId, reason } = ctx.params;
        let voided = 0;
        for (const commissionId of await this.repo.listUncreditedCommissionIds(programId, partnerId)) {
          if (await this.repo.transaction((tx) => ledger.voidForBan(tx, programId, commissionId, reason, new Date()))) voided++;
        }
        if (voided) this.relay.nudge();
        return { voided };
      },
    },

    /** Holds back a commission not yet credited from the credit run, with a reason; or releases it. */
    holdCommission: {
      handler(ctx: Context<Input<typeof S.HoldCommissionInput>>) {
        const { programId, commissionId, reason } = ctx.params;
        return this.setHeld(programId, commissionId, { reason });
      },
    },
    releaseCommission: {
      handler(ctx: Context<Input<typeof S.ProgramCommissionInput>>) {
        return this.setHeld(ctx.params.programId, ctx.params.commissionId, null);
      },
    },

    /** A bonus or a clawback for an enrolled partner, in the program's currency (ledger.createManualCommission). */
    createManual: {
      async handler(ctx: Context<Input<typeof S.CreateManualCommissionInput>>) {
        const { programId, partnerId, type, amountCents, description } = ctx.params;
        // A partner not enrolled in the program is a 404 (getEnrollment); their group gives the hold a bonus waits out.
        const [earning, program] = await Promise.all([partnerRewards(ctx, programId, partnerId), getProgram(ctx, programId), call(ctx, "programs.getEnrollment", { programId, partnerId })]);
        const now = new Date();
        const signedCents = type === "bonus" ? amountCents : -amountCents;
        const commission = await this.repo.transaction((tx) =>
          ledger.createManualCommission(tx, manualCommission({ programId, partnerId, currency: program.currency, signedCents, description, holdDays: earning.group.holdDays }, now), now),
        );
        this.relay.nudge();
        return created(ctx, programResourceLocation(ctx, programId, `/commissions/${commission.id}`), commissionListItem({ ...commission, refunds: [] }));
      },
    },

    /** What a partner's sale commissions count (tiered rewards; the rewards preview). */
    tierStats: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.TierStatsInput>>) {
        const { programId, partnerId, at } = ctx.params;
        return this.repo.tierStats(programId, partnerId, new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)), at);
      },
    },

    /** Spec 3.1: one refund or chargeback against the sale's commission, in one transaction. */
    reverseForSale: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ReverseForSaleInput>>): Promise<RefundResponse> {
        const input = ctx.params;
        const response = await reverseForSale(this.repo, input, new Date());
        if (reversalApplied(response)) this.relay.nudge();
        return response;
      },
    },

    /** The processor's cumulative refunds and disputes of a sale, settled on its commission (ledger.settleProcessorReversal). */
    settleProcessorForSale: {
      idempotent: true,
      visibility: "public",
      async handler(ctx: Context<Input<typeof S.SettleProcessorForSaleInput>>) {
        const input = ctx.params;
        const outcome = await this.repo.transaction((tx) => ledger.settleProcessorReversal(tx, input, new Date()));
        if (outcome.kind !== "settled") return outcome;
        if (outcome.applied || outcome.restored.length) this.relay.nudge();
        const c = outcome.commission;
        return {
          kind: "settled",
          commissionId: c.id,
          status: c.status,
          refundedCents: c.refundedCents,
          applied: outcome.applied,
          restored: outcome.restored,
          deductionAmount: toMajorUnits(outcome.deductionCents, c.currency),
        };
      },
    },

    /** Credits every commission whose hold has passed (also run periodically). */
    approveDue: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ApproveDueInput>>) {
        const { programId } = ctx.params;
        const approved: number[] = [];
        for (;;) {
          const now = new Date();
          const ids = await this.repo.listDueCommissionIds(now, 200, programId);
          for (const id of ids) {
            const c = await this.repo.transaction((tx) => ledger.approveCommission(tx, id, now));
            if (c) approved.push(c.id);
          }
          if (ids.length < 200) break;
        }
        // Each credit wrote a commission.credited event.
        if (approved.length) this.relay.nudge();
        return { approved: approved.length, commissionIds: approved };
      },
    },

    createWithdrawal: {
      async handler(ctx: Context<Input<typeof S.CreateWithdrawalInput>>) {
        const input = ctx.params;
        const key = await this.balanceKey(ctx, input);
        const withdrawal = await this.repo.transaction((tx) => ledger.createWithdrawal(tx, key, input.amountCents, new Date(), input.idempotencyKey));
        this.relay.nudge(); // withdrawal.created (a replayed request wrote nothing: the nudge finds no work)
        return toDto(withdrawal);
      },
    },

    payWithdrawal: {
      async handler(ctx: Context<Input<typeof S.WithdrawalIdInput>>) {
        const { withdrawalId } = ctx.params;
        const withdrawal = await this.repo.transaction((tx) => ledger.payWithdrawal(tx, withdrawalId, new Date()));
        this.relay.nudge(); // withdrawal.paid and a commission.paid per commission it paid
        return toDto(withdrawal);
      },
    },

    /** Commission amounts by state per UTC day and per partner, and the partners' balances (the program overview; docs/merchants.md). */
    stats: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.StatsInput>>) {
        const input = ctx.params;
        const { currency } = await getProgram(ctx, input.programId);
        const zero = { commissions: 0, pendingCents: 0, creditedCents: 0, paidCents: 0, reversedCents: 0 };
        // Test sales never earn a commission: the test view has none.
        const answer = await answerStats(input, zero, (q) => (q.test ? Promise.resolve({ byDay: [], byPartner: [] }) : this.repo.commissionStats(q, currency)));
        const balances = input.test || !input.partners ? [] : await this.repo.programBalances(input.programId, currency, input.partnerIds);
        return { ...answer, currency, balances: balances.map((b) => ({ partnerId: b.partnerId, balanceCents: b.balanceCents })) };
      },
    },

    /** The dashboard's create-withdrawal (payouts:write, checked by the gateway): the operator's action, for one program. */
    createProgramWithdrawal: {
      async handler(ctx: Context<Input<typeof S.CreateWithdrawalInput>>) {
        const input = ctx.params;
        // A partner of another program is not found here (404), rather than given an empty balance.
        await call(ctx, "programs.getEnrollment", { programId: input.programId, partnerId: input.partnerId });
        const key = await this.balanceKey(ctx, input);
        return toDto(await this.repo.transaction((tx) => ledger.createWithdrawal(tx, key, input.amountCents, new Date(), input.idempotencyKey)));
      },
    },

    /** The dashboard's mark-paid: only a withdrawal of the program in the path (another's is not found, as if it did not exist). */
    payProgramWithdrawal: {
      async handler(ctx: Context<Input<typeof S.ProgramWithdrawalIdInput>>) {
        const { programId, withdrawalId } = ctx.params;
        return toDto(
          await this.repo.transaction(async (tx) => {
            const found = await tx.getWithdrawal(withdrawalId);
            if (!found || found.programId !== programId) throw new NotFoundError(`No withdrawal with id ${withdrawalId} in program ${programId}.`);
            return ledger.payWithdrawal(tx, withdrawalId, new Date());
          }),
        );
      },
    },

    /** Who a run would pay and skip now (docs/payouts.md): reads only. */
    previewPayoutRun: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PreviewPayoutRunInput>>) {
        const { payouts, ...plan } = await payouts_.planRun(ctx, this.repo, payoutProcessor(ctx), ctx.params.programId, ctx.params.periodKey);
        return { ...plan, payouts: payouts.map(({ minPayoutCents: _minimum, ...p }) => p) };
      },
    },

    /** Makes the period's run (idempotent on the period) and sends its Stripe payouts at once. */
    startPayoutRun: {
      async handler(ctx: Context<Input<typeof S.StartPayoutRunInput>>) {
        const { run, created } = await payouts_.startRun(ctx, this.repo, payoutProcessor(ctx), ctx.params);
        if (created) {
          this.relay.nudge();
          this.payoutWorker.nudge();
        }
        return { created, run: toDto(await payouts_.runView(ctx, this.repo, run, false)) };
      },
    },

    listPayoutRuns: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ListPayoutRunsInput>>) {
        await getProgram(ctx, ctx.params.programId);
        const page = await this.repo.listPayoutRunsPage(ctx.params);
        return { data: await Promise.all(page.data.map(async (run) => toDto(await payouts_.runView(ctx, this.repo, run, false)))), nextCursor: page.nextCursor };
      },
    },

    getPayoutRun: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PayoutRunIdInput>>) {
        return toDto(await payouts_.runView(ctx, this.repo, await this.programRun(ctx.params.programId, ctx.params.runId), true));
      },
    },

    /** One batch of a run's payouts CSV (every payout), bank file or PayPal file (the gateway pulls the batches). */
    exportPayoutRun: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.ExportPayoutRunInput>>) {
        return this.runFileBatch(ctx, RUN_PAYOUTS_CSV, null);
      },
    },
    exportPayoutRunBank: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.ExportPayoutRunInput>>) {
        return this.runFileBatch(ctx, BANK_FILE_CSV, "bank");
      },
    },
    exportPayoutRunPaypal: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.ExportPayoutRunInput>>) {
        return this.runFileBatch(ctx, PAYPAL_FILE_CSV, "paypal");
      },
    },

    /** The run's file was uploaded: its processing payouts of that method become paid, each in its own transaction. */
    markPayoutRunPaid: {
      async handler(ctx: Context<Input<typeof S.MarkRunPaidInput>>) {
        const run = await this.programRun(ctx.params.programId, ctx.params.runId);
        let paid = 0;
        for (const p of await this.repo.listRunPayouts(run.id)) {
          if (p.method !== ctx.params.method || p.status !== "processing" || ledger.sentByWorker(p)) continue;
          await this.repo.transaction((tx) => ledger.payWithdrawal(tx, p.id, new Date()));
          paid++;
        }
        if (paid) {
          this.relay.nudge();
          this.payoutWorker.nudge();
        }
        return { paid };
      },
    },

    /** The merchant says a payout failed or came back: its amount returns to the balance. */
    failProgramWithdrawal: {
      async handler(ctx: Context<Input<typeof S.FailWithdrawalInput>>) {
        const { programId, withdrawalId, reason } = ctx.params;
        const { withdrawal, changed } = await this.repo.transaction(async (tx) => {
          const found = await tx.getWithdrawal(withdrawalId);
          if (!found || found.programId !== programId) throw new NotFoundError(`No withdrawal with id ${withdrawalId} in program ${programId}.`);
          return ledger.failWithdrawal(tx, withdrawalId, { code: "marked_failed", reason }, new Date());
        });
        if (changed) {
          this.relay.nudge();
          this.payoutWorker.nudge();
        }
        return toDto(withdrawal);
      },
    },

    /** The processor's news that a paid payout came back (a reversed transfer): failed, its amount back in the balance. */
    returnPayout: {
      async handler(ctx: Context<Input<typeof S.ReturnPayoutInput>>) {
        const { withdrawalId, code, reason } = ctx.params;
        const { withdrawal, changed } = await this.repo.transaction((tx) => ledger.failWithdrawal(tx, withdrawalId, { code, reason }, new Date()));
        if (changed) this.relay.nudge();
        return { changed, withdrawal: toDto(withdrawal) };
      },
    },

    getPayoutSchedule: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        await getProgram(ctx, programId);
        return payouts_.scheduleView((await this.repo.getPayoutSchedule(programId)) ?? payouts_.MANUAL_SCHEDULE(programId));
      },
    },

    setPayoutSchedule: {
      async handler(ctx: Context<Input<typeof S.PayoutScheduleInput>>) {
        const { programId, kind } = ctx.params;
        await getProgram(ctx, programId);
        const schedule = await this.repo.setPayoutSchedule({
          programId,
          kind,
          dayOfMonth: kind === "monthly" ? ctx.params.dayOfMonth! : null,
          weekday: kind === "weekly" ? ctx.params.weekday! : null,
          updatedAt: new Date(),
        });
        return payouts_.scheduleView(schedule);
      },
    },

    /** One of the partner's payouts with the commissions it holds or paid (the portal passes the signed-in partner). */
    partnerPayout: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PartnerPayoutInput>>) {
        const { programId, partnerId, withdrawalId } = ctx.params;
        const payout = await this.repo.getWithdrawal(withdrawalId);
        if (!payout || payout.programId !== programId || payout.partnerId !== partnerId) throw new NotFoundError(`No payout ${withdrawalId} of yours in program ${programId}.`);
        const commissions = await this.repo.listWithdrawalCommissions(withdrawalId);
        return toDto({
          ...payout,
          commissions: commissions.map((c) => ({
            id: c.id,
            kind: c.kind,
            transactionId: c.transactionId,
            netCents: c.amountCents - c.deductedCents,
            status: c.status,
            createdAt: c.createdAt,
          })),
        });
      },
    },

    /** The partner's statement, in one batch per payout page: every payout with each commission it paid or holds. */
    partnerStatement: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PartnerStatementInput>>) {
        const { programId, partnerId, cursor } = ctx.params;
        return readExportBatch(STATEMENT_CSV, async (limit) => {
          const page = await this.repo.listWithdrawalsPage({ programId, partnerId, limit: Math.max(1, Math.floor(limit / 10)), cursor });
          const rows = [];
          for (const payout of page.data) {
            const commissions = payout.status === "failed" || payout.status === "cancelled" ? [] : await this.repo.listWithdrawalCommissions(payout.id);
            if (!commissions.length) rows.push({ payout, commission: null });
            for (const commission of commissions) rows.push({ payout, commission });
          }
          return { data: rows, nextCursor: page.nextCursor };
        });
      },
    },

    /** A partner's balance in a program, with its withdrawals. */
    balance: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.BalanceKeyInput>>) {
        const key = await this.balanceKey(ctx, ctx.params);
        const [stored, withdrawals, held] = await Promise.all([
          this.repo.getBalance(key),
          this.repo.listWithdrawals(key),
          this.repo.reviewHeldCents(key.programId, key.currency, [key.partnerId]),
        ]);
        const balance = stored ?? { ...key, balanceCents: 0, creditedCents: 0, deductedCents: 0, paidCents: 0 };
        // Held for review: pending commissions under a fraud review, shown apart (docs/fraud.md).
        return toDto({ ...balance, heldForReviewCents: held.get(key.partnerId) ?? 0, withdrawals });
      },
    },

    /** A page of a program's commissions with their refunds (dashboard; the partner portal passes partnerId). */
    list: {
      idempotent: true,
      handler(ctx: Context<ListCommissions>) {
        return this.listCommissions(ctx, ctx.params);
      },
    },
    /** A page of a program's withdrawals (dashboard; the partner portal passes partnerId). */
    listWithdrawals: {
      idempotent: true,
      handler(ctx: Context<ListWithdrawals>) {
        return this.listWithdrawals(ctx, ctx.params);
      },
    },

    /** One batch of the commissions CSV export: a keyset page of the list, longer (shared/csv-export.ts; the gateway writes the file). */
    export: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ExportCommissionsInput>>) {
        await getProgram(ctx, ctx.params.programId);
        return readExportLines(COMMISSIONS_CSV.columns, (limit) => this.repo.exportCommissionsLines({ ...ctx.params, limit }));
      },
    },
    /** One batch of the withdrawals CSV export. */
    exportWithdrawals: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ExportWithdrawalsInput>>) {
        await getProgram(ctx, ctx.params.programId);
        return readExportLines(WITHDRAWALS_CSV.columns, (limit) => this.repo.exportWithdrawalsLines({ ...ctx.params, limit }));
      },
    },

    /** A commission with its refunds and outbox events (operators, REPL). */
    get: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.CommissionIdInput>>) {
        const { commissionId } = ctx.params;
        const commission = await this.repo.getCommission(commissionId);
        if (!commission) throw new NotFoundError(`No commission with id ${commissionId}.`);
        const [refunds, events] = [await this.repo.listRefunds(commissionId), await this.repo.listOutbox({ commissionId, limit: 100 })];
        return toDto({ ...commission, refunds, outbox: events });
      },
    },

    outboxBacklog: {
      idempotent: true,
      async handler() {
        return { pending: await this.repo.outbox.outboxBacklog() };
      },
    },

    /** Checks the ledger invariants over one consistent snapshot (operators: `cli reconcile`, `GET /api/admin/reconcile`). */
    reconcile: {
      idempotent: true,
      async handler(ctx: Context) {
        const started = Date.now();
        const [report, conversions, ...drifts] = await Promise.all([
          this.repo.ledgerSnapshot().then((snapshot) => checkLedgerInvariants(snapshot, RECONCILE_MAX_VIOLATIONS)),
          call(ctx, "sales.conversionDrift", { limit: RECONCILE_MAX_VIOLATIONS }),
          call(ctx, "sales.rollupDrift", { limit: RECONCILE_MAX_VIOLATIONS }),
          call(ctx, "attribution.rollupDrift", { limit: RECONCILE_MAX_VIOLATIONS }),
          call(ctx, "notifications.rollupDrift", { limit: RECONCILE_MAX_VIOLATIONS }),
        ]);
        const checked = withConversionDrift(withRollupDrift(report, drifts.flat(), RECONCILE_MAX_VIOLATIONS), conversions, RECONCILE_MAX_VIOLATIONS);
        return { ...checked, checkedAt: new Date(started).toISOString(), durationMs: Date.now() - started };
      },
    },
  },

  methods: {
    /** The program's fraud rules for a conversion about to earn (fraud-check.ts); none on: nothing asked of anyone. */
    async fraudCheck(ctx: Context, conversion: ConversionToCheck): Promise<FraudCheck> {
      const settings = (await getProgram(ctx, conversion.programId)).fraudSettings as FraudSettings;
      if (!anyFraudRuleEnabled(settings)) return NO_FRAUD_CHECK;
      return checkConversion(
        {
          repo: this.repo,
          clickFacts: (programId, clickId) => call(ctx, "attribution.clickFacts", { programId, clickId }),
          partnerFacts: (programId, partnerId) => call(ctx, "programs.partnerFraudFacts", { programId, partnerId }),
          partnerAddressHashes: (partnerId, day) => call(ctx, "accounts.partnerAddressHashes", { partnerId, day }),
        },
        settings,
        conversion,
      );
    },

    async fraudReviewViews(ctx: Context, reviews: FraudReview[]) {
      const partnerIds = [...new Set(reviews.map((r) => r.partnerId))];
      const names = new Map(await Promise.all(partnerIds.map(async (id) => [id, (await call(ctx, "programs.getPartner", { partnerId: id })).name] as const)));
      const commissions = await Promise.all(reviews.map((r) => this.repo.getCommission(r.commissionId)));
      return reviews.map((r, i) => fraudReviewView(r, commissions[i]!, names.get(r.partnerId) ?? `Partner ${r.partnerId}`));
    },

    async decideFraudReview(ctx: Context, programId: number, reviewId: number, decision: ledger.ReviewDecision) {
      const outcome = await this.repo.transaction((tx) => ledger.decideFraudReview(tx, programId, reviewId, decision, new Date()));
      if (!outcome) throw new NotFoundError(`No fraud review ${reviewId} in program ${programId}.`);
      // A rejection's reversal event, and a cleared commission's credit later, go out through the outbox.
      if (outcome.changed) this.relay.nudge();
      const [view] = await this.fraudReviewViews(ctx, [outcome.review]);
      return { review: view, changed: outcome.changed };
    },

    /** A new commission goes out at once (its commission.created event) and is counted. */
    commissionCreated(result: CreatedCommission | NoCommission) {
      if (!result.created) return result;
      this.relay.nudge();
      countMetric(this.broker, METRICS.commissionsCreated, { currency: result.currency });
      countMetric(this.broker, METRICS.commissionAmountCents, { currency: result.currency }, result.amountCents);
      return result;
    },

    async listCommissions(ctx: Context, input: ListCommissions) {
      // 404 for a program that does not exist (the dashboard's policy checked it already; operators have none).
      await getProgram(ctx, input.programId);
      return mapPage(await this.repo.listCommissionsPage(input), commissionListItem);
    },
    async listWithdrawals(ctx: Context, input: ListWithdrawals) {
      await getProgram(ctx, input.programId);
      return mapPage(await this.repo.listWithdrawalsPage(input), withdrawalListItem);
    },
    /** A run of the program (another program's is not found, as if it did not exist). */
    async programRun(programId: number, runId: number) {
      const run = await this.repo.getPayoutRun(runId);
      if (!run || run.programId !== programId) throw new NotFoundError(`No payout run ${runId} in program ${programId}.`);
      return run;
    },

    /** A commission of the program (another program's is not found, as if it did not exist). */
    async programCommission(programId: number, commissionId: number) {
      const commission = await this.repo.getCommission(commissionId);
      if (!commission || commission.programId !== programId) throw new NotFoundError(`No commission ${commissionId} in program ${programId}.`);
      return commission;
    },
    async setHeld(programId: number, commissionId: number, hold: { reason: string } | null) {
      await this.programCommission(programId, commissionId);
      const result = (await this.repo.transaction((tx) => ledger.setCommissionHeld(tx, commissionId, hold, new Date())))!;
      const refunds = await this.repo.listRefunds(commissionId);
      return { commission: commissionListItem({ ...result.commission, refunds }), changed: result.changed };
    },

    /** One batch of a run's file: its payouts by id (those of `method` still processing, or every one), with the partners' details. */
    async runFileBatch(ctx: Context<Input<typeof S.ExportPayoutRunInput>>, layout: CsvLayout<RunFileRow>, method: "bank" | "paypal" | null) {
      const { programId, runId, cursor } = ctx.params;
      const run = await this.programRun(programId, runId);
      // A file lists the payouts the merchant sends: not those the worker sends (Stripe, the PayPal Payouts API).
      const payouts = (await this.repo.listRunPayouts(run.id)).filter((p) => method === null || (p.method === method && p.status === "processing" && !ledger.sentByWorker(p)));
      return readExportBatch(layout, async (limit) => {
        const rows = payouts.filter((p) => !cursor || p.id > cursor.id).slice(0, limit + 1);
        const partnerIds = [...new Set(rows.map((p) => p.partnerId))];
        const recipients = partnerIds.length ? await call(ctx, "programs.payoutRecipients", { programId, partnerIds }) : [];
        const recipientOf = new Map(recipients.map((r) => [r.partnerId, r]));
        return pageOf(
          rows,
          limit,
          (p) => ({ createdAt: run.createdAt.toISOString(), id: p.id }),
          (payout) => ({ payout, recipient: recipientOf.get(payout.partnerId) ?? null }),
        );
      });
    },

    /** Balances are per partner, program and currency; the currency defaults to the program's. */
    async balanceKey(ctx: Context, input: { partnerId: number; programId: number; currency?: string }): Promise<BalanceKey> {
      const currency = input.currency ?? (await call(ctx, "programs.get", { programId: input.programId })).currency;
      return { partnerId: input.partnerId, programId: input.programId, currency };
    },
  },

  started() {
    // Its events (commission.*, withdrawal.*), from the outbox to notifications (services/clients/outbox-relay.ts).
    this.relay = startServiceOutboxRelay(this, "commissions", this.repo.outbox);
    // Payout runs' Stripe transfers and scheduled runs (docs/payouts.md).
    this.payoutWorker = payouts_.startPayoutWorker(this.broker, this.repo, this.logger, payoutProcessor(this.broker), {
      intervalMs: env("PAYOUT_INTERVAL_MS", 60_000),
      claimMs: env("PAYOUT_CLAIM_MS", 60_000),
      onSettled: () => this.relay.nudge(),
    });
    const approvalIntervalMs = env("APPROVAL_INTERVAL_MS", 3_600_000);
    this.approvalTimer = setInterval(() => {
      call(this.broker, "commissions.approveDue", {}).catch((err) => this.logger.warn("Periodic approval failed.", err));
    }, approvalIntervalMs);
    this.approvalTimer.unref();

    // METRICS=true: the outbox backlog as a gauge (the whole table, so every instance reports the same number); the
    // age of its oldest event is the relay's gauge.
    if (this.broker.isMetricsEnabled()) {
      registerMetric(this.broker, { name: APP_METRICS.outboxBacklog, type: "gauge", description: "Commission events not yet delivered to notifications" });
      const sample = () =>
        this.repo.outbox.outboxBacklog().then(
          (pending) => this.broker.metrics.set(APP_METRICS.outboxBacklog, pending),
          (err) => this.logger.warn("Could not measure the outbox backlog.", err),
        );
      void sample();
      this.backlogTimer = setInterval(sample, env("OUTBOX_METRICS_INTERVAL_MS", 15_000));
      this.backlogTimer.unref();
    }
  },

  async stopped() {
    clearInterval(this.approvalTimer);
    clearInterval(this.backlogTimer);
    await this.payoutWorker?.stop();
    await this.relay?.stop();
  },
};

export default CommissionsService;
