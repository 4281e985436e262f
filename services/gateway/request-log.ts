/**
 * The gateway's log lines a user acts on at the default level: one per
 * tracked event (click, lead, sale, refund, processor webhook) and one per
 * refused request (4xx). Only chosen fields, never the body or headers: no
 * API key, operator token, session or click cookie, password or email can
 * reach the log (docs/deploy.md, "Logs and request ids").
 */

type FieldValue = string | number | boolean | null | undefined;
type Fields = Record<string, FieldValue>;

/** The tracking actions behind the public endpoints, by the event name their log line carries. */
export const TRACKED_EVENTS: Readonly<Record<string, string>> = {
  "attribution.trackClick": "click",
  "attribution.trackLead": "lead",
  "sales.track": "sale",
  "sales.refund": "refund",
  "gateway.processorWebhook": "processor_webhook",
  "gateway.paddleWebhook": "processor_webhook",
};

const integer = (v: unknown): number | undefined => (typeof v === "number" && Number.isSafeInteger(v) ? v : undefined);
/** A value a line may carry: a scalar; anything else (an object could hold anything) is left out. */
const scalar = (v: unknown): FieldValue => (v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : undefined);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

/** The program a request is for: the API key's, else a browser call's `program_id` (when it is a number). */
export function programOf(meta: { programId?: number } | undefined, params: unknown): number | undefined {
  return integer(meta?.programId) ?? integer((params as { program_id?: unknown } | null | undefined)?.program_id);
}

/** What happened, in one word, from the action's answer (its chosen scalar fields only). */
export function outcomeOf(event: string, data: unknown): Fields {
  const d = isRecord(data) ? data : {};
  switch (event) {
    case "click":
      return { outcome: "recorded", test: scalar(d.test) };
    case "lead":
      return { outcome: d.created ? "created" : "updated", attributed: scalar(d.attributed), test: scalar(d.test) };
    case "sale":
      return {
        outcome: d.attributed ? "attributed" : "unattributed",
        saleId: scalar(d.sale_id),
        amountCents: scalar(d.amount_cents),
        currency: scalar(d.currency),
        commissionId: scalar(d.commission_id),
        commissionStatus: scalar(d.commission_status),
        test: scalar(d.test),
      };
    case "refund":
      return { outcome: scalar(d.status), commissionId: scalar(d.commission_id), deductionAmount: scalar(d.deductionAmount) };
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
    ...outcomeOf(event, data),
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
