import { z } from "zod";
import { fromDecimalText } from "../../shared/validation";
import { Id } from "../programs/schemas";
import { WEBHOOK_EVENT_TYPES } from "./repository";

const Kind = z.enum(["partner_notice", "advertiser_warning"]);
// Query strings carry text: accept true/false/1/0 as well as JSON booleans.
const Flag = z.union([z.boolean(), z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1")]);
const Limit = (max: number, fallback: number) => z.preprocess(fromDecimalText, z.number().int().min(1).max(max)).default(fallback);

export const EventTypeInput = z.object({ type: z.string() });

/** What the commissions outbox relay sends (one outbox event). The payload is documented in docs/architecture.md. */
export const CommissionEventInput = z.object({
  eventId: Id,
  type: z.string(),
  occurredAt: z.iso.datetime({ offset: true }).optional(),
  payload: z.looseObject({
    commissionId: Id,
    programId: Id,
    partnerId: Id,
    transactionId: z.string(),
    status: z.string(),
    currency: z.string(),
    reason: z.string().nullable(),
    deductionCents: z.number().int().optional(),
    wasPaidOut: z.boolean().optional(),
  }),
});

/** Operators: any notifications, by workspace, program, partner or kind. */
export const ListInput = z.strictObject({
  workspaceId: Id.optional(),
  programId: Id.optional(),
  partnerId: Id.optional(),
  kind: Kind.optional(),
  unread: Flag.optional(),
  limit: Limit(500, 50),
});

/** Dashboard: the workspace's inbox, newest first, `before` pages back. */
export const WorkspaceListInput = z.strictObject({
  workspaceId: Id,
  kind: Kind.optional(),
  unread: Flag.optional(),
  before: Id.optional(),
  limit: Limit(200, 50),
});

export const MarkReadInput = z.strictObject({ workspaceId: Id, notificationId: Id });
export const MarkAllReadInput = z.strictObject({ workspaceId: Id, kind: Kind.optional() });

const WebhookUrl = z
  .string()
  .trim()
  .max(2000)
  .pipe(z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }));

export const CreateEndpointInput = z.strictObject({
  workspaceId: Id,
  url: WebhookUrl,
  description: z.string().trim().max(500).nullish().transform((v) => v || null),
  // Default: every event type there is today.
  eventTypes: z
    .array(z.enum(WEBHOOK_EVENT_TYPES))
    .min(1)
    .default([...WEBHOOK_EVENT_TYPES])
    .transform((types) => [...new Set(types)]),
});

export const WorkspaceIdInput = z.strictObject({ workspaceId: Id });
export const EndpointIdInput = z.strictObject({ endpointId: Id });
export const DisableEndpointInput = z.strictObject({ endpointId: Id, reason: z.string().trim().max(500).optional() });

export const ListDeliveriesInput = z.strictObject({
  endpointId: Id,
  status: z.enum(["pending", "succeeded", "failed"]).optional(),
  limit: Limit(200, 50),
});
