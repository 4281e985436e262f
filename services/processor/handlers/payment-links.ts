import { processed, type HandlerContext, type HandlerResult } from "../handler";
import { Charge, InvoicePayment, objectOf, PaymentIntent } from "../objects";
import { linkReferences } from "../payments";

/**
 * Events that only tell which references name one payment. A link that joins
 * a known sale settles refunds or disputes that arrived before it.
 */
const linked = (settled: Record<string, unknown> | null, references: Array<string | null>) => processed({ linked: references.filter(Boolean), ...(settled ? { settled } : {}) });

/** `invoice_payment.paid` (API 2025-03-31 and later): the invoice was paid by this payment intent or charge. */
export async function handleInvoicePaymentPaid(h: HandlerContext): Promise<HandlerResult> {
  const paid = objectOf(InvoicePayment, h.event);
  const references = [paid.invoice, paid.payment?.payment_intent ?? null, paid.payment?.charge ?? null];
  return linked(await linkReferences(h, references), references);
}

/** `charge.succeeded`: the charge and its payment intent (and, before 2025-03-31, its invoice). */
export async function handleChargeSucceeded(h: HandlerContext): Promise<HandlerResult> {
  const charge = objectOf(Charge, h.event);
  const references = [charge.id, charge.payment_intent, charge.invoice];
  return linked(await linkReferences(h, references), references);
}

/** `payment_intent.succeeded`: the payment intent, its charge (and, before 2025-03-31, its invoice). */
export async function handlePaymentIntentSucceeded(h: HandlerContext): Promise<HandlerResult> {
  const intent = objectOf(PaymentIntent, h.event);
  const references = [intent.id, intent.latest_charge, intent.invoice];
  return linked(await linkReferences(h, references), references);
}
