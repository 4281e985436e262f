// Duplicated on purpose: services/processor/invoice.ts holds the same reading for
// the server, which must not import the SDK (a separate package). Change both
// together; test/unit/processor.test.ts runs the same cases on both.
/**
 * Where an invoice keeps its subscription's details depends on the processor
 * API version: from 2025-03-31 under `parent.subscription_details`; before,
 * `subscription_details` and `subscription` (an id or an expanded object) at
 * the top level (spec 6.2, 9). Read the new place first, then the old ones.
 */
export interface InvoiceLike {
  id: string;
  billing_reason?: string | null;
  amount_paid?: number | null;
  currency?: string | null;
  customer?: string | { id: string } | null;
  parent?: {
    subscription_details?: { metadata?: Record<string, string> | null; subscription?: string | { id: string } | null } | null;
  } | null;
  subscription_details?: { metadata?: Record<string, string> | null } | null;
  subscription?: string | { id: string; metadata?: Record<string, string> | null } | null;
}

export interface SubscriptionDetails {
  subscriptionId: string | null;
  metadata: Record<string, string>;
}

const idOf = (v: string | { id: string } | null | undefined): string | null => (typeof v === "string" ? v : (v?.id ?? null));

export function subscriptionDetailsOf(invoice: InvoiceLike): SubscriptionDetails {
  const details = invoice.parent?.subscription_details;
  if (details) return { subscriptionId: idOf(details.subscription), metadata: { ...(details.metadata ?? {}) } };
  const subscription = invoice.subscription;
  const metadata = invoice.subscription_details?.metadata ?? (typeof subscription === "object" ? subscription?.metadata : null) ?? {};
  return { subscriptionId: idOf(subscription), metadata: { ...metadata } };
}
