import { z } from "zod";
import { ExportCursor } from "../../shared/csv-export";
import { fromDecimalText } from "../../shared/validation";
import { Id } from "../../shared/values";
import { PartnerProfilePatchFields } from "../../shared/partner-profile";
import { POSTBACK_EVENT_TYPES } from "../../shared/events";

/** The partner portal's routes carry no partner id: it is the signed-in partner's (ctx.meta.partner). */
export const NoInput = z.strictObject({});

export const ProgramInput = z.strictObject({ programId: Id.meta({ description: "The program's id (one you are enrolled in).", example: 1 }) });

const Flag = z.union([z.boolean(), z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1")]);

/** Pagination in (docs/partners.md): limit 1..100 (default 25) and the opaque cursor of the previous page. */
const Page = {
  limit: z.preprocess(fromDecimalText, z.number().int().min(1).max(100)).default(25).meta({ description: "At most this many (1 to 100, default 25).", example: 25 }),
  cursor: z.string().min(1).max(200).optional().meta({ description: "The nextCursor of the previous page.", example: "12" }),
};

export const NoticesInput = ProgramInput.extend({
  unread: Flag.optional().meta({ description: "true for unread only, false for read only (also 1 or 0).", example: "true" }),
  ...Page,
});

export const NoticeReadInput = ProgramInput.extend({ notificationId: Id.meta({ description: "The notice's id.", example: 12 }) });

export const ListInput = ProgramInput.extend(Page);

export const PayoutInput = ProgramInput.extend({ withdrawalId: Id.meta({ description: "The payout's id.", example: 9 }) });
export const StatementInput = ProgramInput.extend({ cursor: ExportCursor });

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a day written YYYY-MM-DD");

/** Your figures in a program per UTC day: the program overview's range rules (shared/domain/stats.ts). */
export const StatsInput = ProgramInput.extend({
  from: Day.optional().meta({ description: "First day of the range (UTC, YYYY-MM-DD, inclusive); default: 29 days before to.", example: "2026-01-01" }),
  to: Day.optional().meta({ description: "Last day of the range (UTC, YYYY-MM-DD, inclusive); default: today. At most 366 days in all.", example: "2026-01-30" }),
});

/** Your traffic breakdowns in a program: the stats' range rules. */
export const BreakdownsInput = StatsInput;

/** Your profile and payout details: each field given is set, the others keep their values (email is not one: it is how you sign in). */
export const UpdateProfileInput = z.strictObject(PartnerProfilePatchFields);

/** Postbacks (docs/partners.md, "Postbacks"): your URL for your own events in the program. */
const PostbackId = Id.meta({ description: "The postback's id.", example: 4 });
export const CreatePostbackInput = ProgramInput.extend({
  url: z
    .string()
    .trim()
    .max(2000)
    .pipe(z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }))
    .meta({ description: "Where your events are posted (http or https, at most 2000 characters).", example: "https://partner.example/postback" }),
  eventTypes: z
    .array(z.enum(POSTBACK_EVENT_TYPES))
    .min(1)
    .optional()
    .meta({
      description: "The event types to send: lead.created, sale.created, commission.created, commission.reversed; default: all four.",
      example: ["sale.created", "commission.created"],
    }),
});
export const PostbackInput = ProgramInput.extend({ postbackId: PostbackId });
export const PostbackDeliveriesInput = PostbackInput.extend({
  status: z.enum(["pending", "succeeded", "failed"]).optional().meta({ description: "Only deliveries in this state.", example: "failed" }),
  ...Page,
});
export const RetryPostbackInput = PostbackInput.extend({ deliveryId: Id.meta({ description: "The delivery's id (from the postback's delivery log).", example: 9 }) });
