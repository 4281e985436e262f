import { z } from "zod";
import { Id, ReferralCode } from "../programs/schemas";

export const ClickId = z.string().trim().min(1).max(128);
export const CustomerKey = z.string().trim().min(1).max(256);
export const Email = z.string().trim().toLowerCase().email().max(320);
const OptionalText = (max: number) => z.string().max(max).optional();
const Timestamp = z.iso.datetime({ offset: true }).optional();

/** `POST /api/v1/track/click` (public, from the browser). */
export const TrackClickRequest = z.strictObject({
  program_id: Id,
  referral_code: ReferralCode,
  test: z.boolean().optional().default(false),
  url: OptionalText(2048),
  referrer: OptionalText(2048),
  timestamp: Timestamp,
});

/** `POST /api/v1/track/lead`: from a merchant server (Bearer) or the browser (program_id + click_id). */
export const TrackLeadRequest = z.strictObject({
  program_id: Id.optional(),
  customer_key: CustomerKey,
  email: Email.optional(),
  click_id: ClickId.optional(),
  test: z.boolean().optional().default(false),
  timestamp: Timestamp,
});

export const ResolveInput = z.object({
  programId: Id,
  clickId: ClickId.nullish(),
  email: Email.nullish(),
  customerKey: CustomerKey.nullish(),
  processorCustomerId: z.string().max(255).nullish(),
});

export const TestEventStatsInput = z.object({
  programId: Id,
  kind: z.enum(["click", "lead"]),
  limit: z.number().int().min(1).max(100).default(10),
});
