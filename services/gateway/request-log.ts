/**
 * The gateway's log lines a user acts on at the default level: one per
 * tracked event (click, lead, sale, refund, processor webhook) and one per
 * refused request (4xx). Only chosen fields, never the body or headers: no
 * API key, operator token, session or click cookie, password or email can
 * reach the log (docs/deploy.md, "Logs and request ids").
 */

type Fields = Record<string, string | number | boolean | null | undefined>;

/** The tracking actions behind the public endpoints, by the event name their log line carries. */
export const TRACKED_EVENTS: Readonly<Record<string, string>> = {
  "attribution.trackClick": "click",
  "attribution.trackLead": "lead",
  "sales.track": "sale",
  "sales.refund": "refund",
  "gateway.processorWebhook": "processor_webhook",
};

const integer = (v: unknown): number | undefined => (typeof v === "number" && Number.isSafeInteger(v) ? v : undefined);

/** The program a request is for: the API key's, else a browser call's `program_id` (when it is a number). */
export function programOf(meta: { programId?: number } | undefined, params: unknown): number | undefined {
  return integer(meta?.programId) ?? integer((params as { program_id?: unknown } | null | undefined)?.program_id);
}

/** What happened, in one word, from the action's answer. */
export function outcomeOf(event: string, data: Record<string, any> | null | undefined): Fields {
  const d = data ?? {};
  switch (event) {
    case "click":
      return { outcome: "recorded", test: d.test };
    case "lead":
      return { outcome: d.created ? "created" : "updated", attributed: d.attributed, test: d.test };
    case "sale":
      return {
        outcome: d.attributed ? "attributed" : "unattributed",
        saleId: d.sale_id,
        amountCents: d.amount_cents,
        currency: d.currency,
        commissionId: d.commission_id,
        commissionStatus: d.commission_status,
        test: d.test,
      };
    case "refund":
      return { outcome: d.status, commissionId: d.commission_id, deductionAmount: d.deductionAmount };
    case "processor_webhook":
      return { outcome: d.rejected ? "rejected" : d.duplicate ? "duplicate" : d.handled ? "processed" : "ignored" };
    default:
      return {};
  }
}

/** The fields of a tracked event's line. */
export function trackedEventFields(
  action: string | undefined,
  ctx: { requestID?: string | null; meta?: { programId?: number; $statusCode?: number } },
  params: unknown,
  data: unknown,
): Fields | null {
  const event = action ? TRACKED_EVENTS[action] : undefined;
  if (!event) return null;
  return {
    event,
    requestId: ctx.requestID ?? undefined,
    programId: programOf(ctx.meta, params),
    status: ctx.meta?.$statusCode ?? 200,
    ...outcomeOf(event, data as Record<string, any>),
  };
}

/** The fields of a refused request's line (4xx): which endpoint, for which program, the stable error code. */
export function refusedRequestFields(
  req: { method?: string; url?: string; originalUrl?: string; $alias?: { action?: unknown }; $ctx?: { requestID?: string | null; meta?: unknown }; $params?: unknown; body?: unknown },
  error: { status: number; code: string },
): Fields {
  const action = typeof req.$alias?.action === "string" ? req.$alias.action : undefined;
  return {
    event: action ? TRACKED_EVENTS[action] : undefined,
    requestId: req.$ctx?.requestID ?? undefined,
    programId: programOf(req.$ctx?.meta as { programId?: number } | undefined, req.body ?? req.$params),
    method: req.method,
    // The path only: a query string is the caller's and may carry anything.
    path: (req.originalUrl ?? req.url ?? "").split("?")[0].slice(0, 200),
    status: error.status,
    code: error.code,
  };
}
