import { ClickId, CustomerKey, Email } from "../../shared/values";

export interface AttributionHints {
  clickId: string | null;
  email: string | null;
  customerKey: string | null;
}

/** Control characters (NUL among them) never belong in a hint; the database would refuse NUL. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Hints from processor metadata are typed by merchants' code and customers:
 * a malformed one (blank, too long, not an email, control characters) is
 * dropped and reported, and attribution goes on down the spec's order with
 * the others (spec 6.1), rather than failing the whole sale.
 */
export function cleanAttributionHints(raw: { clickId?: unknown; email?: unknown; customerKey?: unknown }): { hints: AttributionHints; dropped: string[] } {
  const dropped: string[] = [];
  const clean = (name: string, value: unknown, schema: typeof ClickId | typeof CustomerKey | typeof Email): string | null => {
    if (value === undefined || value === null || value === "") return null;
    const parsed = typeof value === "string" && !CONTROL.test(value) ? schema.safeParse(value) : null;
    if (parsed?.success) return parsed.data;
    dropped.push(`${name}: ${parsed ? parsed.error.issues[0].message : "not a string without control characters"}`);
    return null;
  };
  return {
    hints: {
      clickId: clean("svc_click_id", raw.clickId, ClickId),
      email: clean("email", raw.email, Email),
      customerKey: clean("svc_customer_key", raw.customerKey, CustomerKey),
    },
    dropped,
  };
}
