import { z } from "zod";

export const GetEventInput = z.object({ eventId: z.string().min(1).max(255).meta({ description: "The processor's event id.", example: "evt_1" }) });

export const ListEventsInput = z.object({
  status: z.enum(["processing", "processed", "failed", "ignored", "rejected"]).optional().meta({ description: "Only events in this state.", example: "rejected" }),
  limit: z.coerce.number().int().min(1).max(500).default(50).meta({ description: "At most this many events.", example: 20 }),
});
