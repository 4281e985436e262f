import { z } from "zod";

export const GetEventInput = z.strictObject({ eventId: z.string().min(1).max(255) });

export const ListEventsInput = z.strictObject({
  status: z.enum(["processing", "processed", "failed", "ignored", "rejected"]).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
