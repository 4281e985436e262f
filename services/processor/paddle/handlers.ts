/**
 * Paddle Billing's notifications (docs/processor-webhooks.md, "Paddle Billing"): each handler translates (translate.ts)
 * and acts through the processor-agnostic parts Stripe's handlers use: recordSaleOnce, linkSale, recordMovements.
 */
import { parseInput } from "../../../shared/validation";
import type { PADDLE_WEBHOOK_EVENTS } from "../../../shared/processor-webhook-events";
import { cleanAttributionHints } from "../attribution-hints";
import { ignored, processed, type CoreHandlerContext, type HandlerResult } from "../handler";
import { linkSale, recordMovements } from "../payments";
import { recordSaleOnce } from "../record-sale";
import { readPaddleField, type PaddleLookup } from "./api";
import { PaddleAdjustment, PaddleTransaction, type PaddleNotification } from "./objects";
import { paddleMovementOf, paddlePaymentOf } from "./translate";

export interface PaddleHandlerContext extends CoreHandlerContext {
  notification: PaddleNotification;
  paddle: PaddleLookup;
}

export type PaddleHandler = (h: PaddleHandlerContext) => Promise<HandlerResult>;

/**
 * `transaction.completed`: a first payment (`web`, `api`) or a renewal (`subscription_recurring`), recorded net of
 * tax and attributed like a Stripe sale: the checkout's `customData` (`svc_click_id`, `svc_customer_key`), the
 * customer's email and the discount's code (read with the program's API key, when it has one), the Paddle customer
 * of an earlier attributed sale (renewals). The transaction id is the reference its adjustments name.
 */
export async function handleTransactionCompleted(h: PaddleHandlerContext): Promise<HandlerResult> {
  const found = paddlePaymentOf(parseInput(PaddleTransaction, h.notification.data));
  if ("ignored" in found) return ignored(found.ignored);
  const p = found.payment;
  const programHint = p.hints.programId;
  if (programHint !== undefined && programHint !== null && String(programHint) !== String(h.program.id)) {
    return ignored(`custom_data program_id ${String(programHint).slice(0, 64)} is not the notification's program ${h.program.id}`);
  }
  // The email matters only without a click id (attribution's first rule wins): Paddle's API is asked only then.
  const hasClick = cleanAttributionHints({ clickId: p.hints.clickId }).hints.clickId !== null;
  const customer = p.processorCustomerId && !hasClick ? await readPaddleField(h, h.paddle, `/customers/${p.processorCustomerId}`, "email") : null;
  const discount = p.discountId ? await readPaddleField(h, h.paddle, `/discounts/${p.discountId}`, "code") : null;
  const { hints, dropped } = cleanAttributionHints({ clickId: p.hints.clickId, email: customer?.value, customerKey: p.hints.customerKey });
  if (dropped.length) h.logger.warn(`Paddle notification ${h.notification.event_id}: attribution hints dropped (${dropped.join("; ")}).`);
  const occurredAt = p.occurredAt ?? new Date(h.notification.occurred_at);
  // Paddle's own rate, when the merchant is paid out in the program's currency (docs/currencies.md).
  const settlement = p.settlement?.currency === h.program.currency ? { ...p.settlement, day: occurredAt.toISOString().slice(0, 10) } : null;
  const sale = await recordSaleOnce(h, {
    programId: h.program.id,
    transactionId: p.transactionId,
    amountCents: p.saleAmountCents,
    currency: p.currency,
    settlement,
    attributionHints: { ...hints, processorCustomerId: p.processorCustomerId, couponCode: discount?.value ?? null },
    isRecurring: p.isRecurring,
    isTest: h.testMode,
    subscriptionId: p.subscriptionId,
    processorCustomerId: p.processorCustomerId,
    occurredAt: occurredAt.toISOString(),
    lines: p.lines.length ? p.lines : null,
    discountIds: p.discountId ? [p.discountId] : null,
  });
  const settled = await linkSale(h, [p.transactionId], { transactionId: p.transactionId, saleAmountCents: p.saleAmountCents, chargedAmountCents: p.chargedAmountCents });
  // What could not be read (the email is asked for only without a click id).
  const unread = [customer?.unavailable ? `email: ${customer.unavailable}` : null, discount?.unavailable ? `discount code: ${discount.unavailable}` : null];
  return processed({
    transactionId: p.transactionId,
    ...(p.subscriptionId ? { subscriptionId: p.subscriptionId } : {}),
    ...sale,
    ...(unread.some(Boolean) ? { unread: unread.filter(Boolean) } : {}),
    ...(p.settlement && !settlement ? { settlementUnavailable: `Paddle paid out in ${p.settlement.currency}, not the program's ${h.program.currency}` } : {}),
    ...(dropped.length ? { droppedHints: dropped } : {}),
    ...(settled ? { settled } : {}),
  });
}

/**
 * `adjustment.created` and `adjustment.updated`: refunds (counted once approved), chargebacks and their reversals,
 * stored per adjustment with its latest status and settled on the transaction's cumulative figures, as Stripe's
 * refunds and disputes are: proportional, idempotent on the adjustment id, in any order (one before its sale is
 * kept and answered 503 for a while, so Paddle delivers it again).
 */
export async function handleAdjustment(h: PaddleHandlerContext): Promise<HandlerResult> {
  const adjustment = parseInput(PaddleAdjustment, h.notification.data);
  const found = paddleMovementOf(adjustment, h.program.id, new Date(h.notification.occurred_at));
  if ("ignored" in found) return ignored(found.ignored);
  const { movement } = found;
  return processed({ adjustmentId: adjustment.id, action: adjustment.action, status: movement.status, ...(await recordMovements(h, [movement], [])) });
}

type PaddleWebhookEventType = (typeof PADDLE_WEBHOOK_EVENTS)[keyof typeof PADDLE_WEBHOOK_EVENTS][number];

/** The notification types acted on: exactly the ones the set-up asks for (shared/processor-webhook-events.ts). */
export const PADDLE_HANDLERS: Record<string, PaddleHandler> = {
  "transaction.completed": handleTransactionCompleted,
  "adjustment.created": handleAdjustment,
  "adjustment.updated": handleAdjustment,
} satisfies Record<PaddleWebhookEventType, PaddleHandler>;
