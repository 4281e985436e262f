/**
 * Partners' postbacks (docs/partners.md, "Postbacks"): a partner's own URL that receives the events of their
 * enrollment in one program, through the same deliveries as a merchant's webhook endpoints (signed, retried,
 * logged, the same target check). What they carry is what the portal shows the partner, no more: ids, amounts,
 * currency, status, times, and the customer masked as the portal masks it; never the customer's email or name, the
 * click, how the sale was attributed, or what the merchant keeps for review.
 */
import { shortenCustomerKey } from "../../shared/customer-masking";
import { POSTBACK_EVENT_TYPES, type PostbackEventType } from "../../shared/events";
import type { PartnerKey } from "./repository";

export { POSTBACK_EVENT_TYPES, type PostbackEventType };

/** A partner's postbacks in one program: at most this many enabled, and this many in all (disabled ones keep their log). */
export const MAX_ENABLED_POSTBACKS = 5;
export const MAX_POSTBACKS = 20;

export const isPostbackEventType = (type: string): type is PostbackEventType => (POSTBACK_EVENT_TYPES as readonly string[]).includes(type);

/**
 * The enrollment an event concerns, whose partner's postbacks get it: its partner in its program. Null for an
 * event without a partner (an unattributed lead or sale), a test lead or sale (the portal leaves those out), and the
 * types postbacks do not take.
 */
export function postbackOwnerOf(type: string, payload: Record<string, unknown>): PartnerKey | null {
  if (!isPostbackEventType(type) || payload.isTest === true) return null;
  const { programId, partnerId } = payload;
  return typeof programId === "number" && typeof partnerId === "number" ? { programId, partnerId } : null;
}

/** The fields of each type's data, in order; `customer` is the masked customer key. */
const COMMISSION_FIELDS = ["commissionId", "programId", "partnerId", "saleId", "transactionId", "status", "currency", "amountCents", "netCents", "saleOriginal", "creditedAt", "paidOutAt"];
const FIELDS: Record<PostbackEventType, readonly string[]> = {
  "lead.created": ["leadId", "programId", "partnerId", "customer", "occurredAt", "createdAt"],
  "sale.created": ["saleId", "programId", "partnerId", "transactionId", "amountCents", "currency", "conversion", "customer", "isRecurring", "commissionDue", "occurredAt", "createdAt"],
  "commission.created": COMMISSION_FIELDS,
  "commission.reversed": [...COMMISSION_FIELDS, "deductionCents", "reasonCode", "reason"],
};

/** An event's data as a partner's postback carries it (docs/partners.md, "Postbacks"): the fields above, missing ones null. */
export function postbackData(type: PostbackEventType, payload: Record<string, unknown>): Record<string, unknown> {
  const customerKey = typeof payload.customerKey === "string" && payload.customerKey !== "" ? payload.customerKey : null;
  return Object.fromEntries(FIELDS[type].map((field) => [field, field === "customer" ? customerKey && shortenCustomerKey(customerKey) : (payload[field] ?? null)]));
}
