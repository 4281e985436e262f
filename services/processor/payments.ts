/**
 * How the processor's objects find their sale, and how refunds and disputes
 * reach the ledger.
 *
 * A payment is known by several references (checkout session, invoice,
 * payment intent, charge) that the processor reveals in different events, in
 * any order. Each event links what it knows: references of a recorded sale
 * are linked to it (`linkSale`); references seen together before their sale
 * is known are kept as aliases (`linkReferences`) and linked when it is.
 * Refunds and disputes are stored per processor object (`recordMovements`),
 * whether or not their sale is known yet; whenever a sale gains references or
 * movements, it is settled from the cumulative figures (`settleSale`).
 *
 * Races: every writer writes first and reads after, so of a link and a
 * movement written concurrently at least one sees the other and settles.
 */
import { typedCall } from "../../shared/typed-call";
import type { SalesContract } from "../sales/contract";
import { refundedOnChargesCents, saleRefundedCents, type ProcessorMovement } from "./processor-refunds";
import { RetryLaterError, type CoreHandlerContext } from "./handler";
import type { ProcessorPayment } from "./repository";

const call = typedCall<SalesContract>();

type SaleFigures = Omit<ProcessorPayment, "reference" | "programId">;
type References = ReadonlyArray<string | null | undefined>;

/** Components are a handful of references; the bound only stops a pathological alias graph. */
const MAX_COMPONENT = 64;

const present = (refs: References): string[] => [...new Set(refs.filter((r): r is string => !!r))];

/** Links `references` and everything aliased to them to the sale, then settles the sale if it has refunds or disputes. */
export async function linkSale(h: CoreHandlerContext, references: References, sale: SaleFigures): Promise<Record<string, unknown> | null> {
  const queue = present(references);
  const seen = new Set(queue);
  while (queue.length && seen.size <= MAX_COMPONENT) {
    const reference = queue.shift()!;
    await h.repo.linkPayment({ ...sale, programId: h.program.id, reference });
    for (const alias of await h.repo.listAliases(h.program.id, reference)) {
      if (!seen.has(alias)) {
        seen.add(alias);
        queue.push(alias);
      }
    }
  }
  const payment = { ...sale, programId: h.program.id, reference: present(references)[0] ?? sale.transactionId };
  return settleSale(h, payment, null);
}

/**
 * Records that `references` name one payment. If one of them (or an alias)
 * already belongs to a sale, the others join it and the sale is settled.
 */
export async function linkReferences(h: CoreHandlerContext, references: References): Promise<Record<string, unknown> | null> {
  const refs = present(references);
  for (const other of refs.slice(1)) await h.repo.addAlias(h.program.id, refs[0], other);
  const payment = await resolveSale(h, refs);
  if (!payment) return null;
  const { transactionId, saleAmountCents, chargedAmountCents } = payment;
  return linkSale(h, refs, { transactionId, saleAmountCents, chargedAmountCents });
}

/** The sale one of the references (or one of their aliases) belongs to. */
export async function resolveSale(h: CoreHandlerContext, references: References): Promise<ProcessorPayment | null> {
  const queue = present(references);
  const seen = new Set(queue);
  while (queue.length && seen.size <= MAX_COMPONENT) {
    const reference = queue.shift()!;
    const payment = await h.repo.findPayment(h.program.id, reference);
    if (payment) return payment;
    for (const alias of await h.repo.listAliases(h.program.id, reference)) {
      if (!seen.has(alias)) {
        seen.add(alias);
        queue.push(alias);
      }
    }
  }
  return null;
}

/**
 * Stores what an event says of refunds, disputes or a charge's refunded
 * amount, then settles their sale. A movement whose sale is not known yet is
 * kept: it is applied when the sale or the missing link arrives. Until then
 * the event answers 503 (so the processor retries it) for a while
 * (`unlinkedRetrySeconds`), then 2xx with the movement parked.
 */
export async function recordMovements(h: CoreHandlerContext, movements: readonly ProcessorMovement[], references: References): Promise<Record<string, unknown>> {
  let changed = false;
  for (const m of movements) changed = (await h.repo.recordMovement(m)) || changed;
  const refs = present([...references, ...movements.flatMap((m) => [m.chargeId, m.paymentIntentId])]);
  for (const other of refs.slice(1)) await h.repo.addAlias(h.program.id, refs[0], other);

  const payment = await resolveSale(h, refs);
  if (!payment) {
    const waiting = `No sale is linked to ${refs.join(" / ")} yet; the ${movements.map((m) => m.kind).join(", ")} is kept and applied when its sale arrives.`;
    const ageSeconds = Date.now() / 1000 - h.eventCreatedSeconds;
    if (ageSeconds < h.unlinkedRetrySeconds) throw new RetryLaterError(waiting);
    return { parked: true, reason: waiting };
  }
  // Join the charge's references to the sale, so later events of it resolve at once.
  const { transactionId, saleAmountCents, chargedAmountCents } = payment;
  for (const reference of refs) await h.repo.linkPayment({ programId: h.program.id, reference, transactionId, saleAmountCents, chargedAmountCents });
  const cause = [...movements].sort((a, b) => b.statusAt.getTime() - a.statusAt.getTime())[0];
  const settled = await settleSale(h, payment, cause ?? null);
  return { transactionId, changed, ...(settled ?? { settled: false }) };
}

/**
 * Settles the sale's commission on the cumulative figures of every refund and
 * dispute known for its charges. The revision is taken before the figures are
 * read, so a settlement never carries a newer revision than its figures.
 */
export async function settleSale(h: CoreHandlerContext, payment: ProcessorPayment, cause: ProcessorMovement | null): Promise<Record<string, unknown> | null> {
  const movementsOfSale = async () => h.repo.listMovements(h.program.id, await h.repo.listPaymentReferences(h.program.id, payment.transactionId));
  // Most sales never see a refund: look before taking a revision.
  if (!(await movementsOfSale()).length) return null;
  const revision = await h.repo.nextRevision(h.program.id, payment.transactionId);
  const movements = await movementsOfSale();
  const refundedOnCharges = refundedOnChargesCents(movements, payment.chargedAmountCents);
  const targetRefundedCents = saleRefundedCents({ saleAmountCents: payment.saleAmountCents, chargedAmountCents: payment.chargedAmountCents, refundedOnChargesCents: refundedOnCharges });
  const result = await call(h.ctx, "sales.settleProcessorTransaction", {
    programId: h.program.id,
    transactionId: payment.transactionId,
    revision,
    targetRefundedCents,
    ...reasonsOf(cause ?? movements[movements.length - 1]),
  });
  return { transactionId: payment.transactionId, refundedOnChargesCents: refundedOnCharges, targetRefundedCents, revision, settlement: result };
}

/** What the ledger records for news about one movement. */
export function reasonsOf(m: Pick<ProcessorMovement, "movementId" | "kind" | "status">) {
  const chargeback = m.kind === "dispute" || m.kind === "reversal";
  const status = m.status.replace(/_/g, " ");
  return {
    causeId: m.movementId,
    reasonCode: chargeback ? ("chargeback" as const) : ("refund" as const),
    reason: chargeback ? "Chargeback at the processor" : "Refunded at the processor",
    restoreReason:
      m.kind === "reversal"
        ? "Chargeback reversed at the processor: commission restored"
        : chargeback
          ? m.status === "won"
            ? "Chargeback won: commission restored"
            : `Dispute ${status}: commission restored`
          : `Refund ${status} at the processor: commission restored`,
  };
}
