import { z } from "zod";

/** The gateway hands over the raw body (as text) and the signature header. */
export const WebhookInput = z.object({ payload: z.string().max(1_048_576), signature: z.string().max(4096).optional() });

export const GetEventInput = z.strictObject({ eventId: z.string().min(1).max(255).meta({ description: "The processor's event id.", example: "evt_1" }) });

export const ListEventsInput = z.strictObject({
  status: z.enum(["processing", "processed", "failed", "ignored", "rejected"]).optional().meta({ description: "Only events in this state.", example: "rejected" }),
  limit: z.coerce.number().int().min(1).max(500).default(50).meta({ description: "At most this many events.", example: 20 }),
});
