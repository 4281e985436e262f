import { z } from "zod";
import { oneLine } from "../../shared/validation";
import { Cents, Currency, Id, ProductRef } from "../../shared/values";

const MAX_BASIS_POINTS = 10_000;

const Recurring = z
  .discriminatedUnion("duration", [
    z.strictObject({ duration: z.literal("first").describe("The first payment only.") }).describe("The first payment only (a one-time sale is a first payment)."),
    z
      .strictObject({
        duration: z.literal("months").describe("For N months."),
        months: z.number().int().min(1).max(120).meta({ description: "How many months after the subscription's first payment renewals still earn.", example: 12 }),
      })
      .describe("The first payment and renewals for N months, counted from the subscription's first payment."),
    z.strictObject({ duration: z.literal("lifetime").describe("For the subscription's life.") }).describe("Every payment for the subscription's life."),
  ])
  .meta({ description: "Which payments of a subscription earn (sale rewards only). Default: lifetime.", example: { duration: "months", months: 12 } });

const Tiers = z
  .strictObject({
    metric: z.enum(["revenue", "sales"]).meta({ description: "What the thresholds count: the partner's attributed revenue (minor units) or number of sales.", example: "revenue" }),
    period: z.enum(["month", "all_time"]).meta({ description: "Counted in the calendar month of the sale (UTC) or all time.", example: "month" }),
    steps: z
      .array(
        z.strictObject({
          threshold: Cents.positive().meta({ description: "Reached when the count before the sale is at least this.", example: 100000 }),
          value: Cents.positive().meta({ description: "The reward's value from this step on, in the reward's kind (basis points or minor units).", example: 3000 }),
        }),
      )
      .min(1)
      .max(10)
      .describe("The steps, in ascending order of threshold (at most 10)."),
  })
  .meta({ description: "Optional steps: a higher value once the partner passes a threshold; never retroactive." });

const ProductList = z.array(ProductRef).max(100).default([]);

/** A reward's terms; what an edit replaces (a new version). Checked against each other in `checkTerms`. */
const TERMS = {
  event: z.enum(["sale", "lead"]).default("sale").meta({ description: "sale (each payment) or lead (once per customer when a lead is attributed; flat only).", example: "sale" }),
  kind: z
    .enum(["percentage", "flat"])
    .meta({ description: "percentage of each sale line (value in basis points: 2000 is 20 %) or a flat amount (value in minor units).", example: "percentage" }),
  value: Cents.meta({ description: "Basis points (1 to 10000) for a percentage, a positive amount in minor units for a flat reward.", example: 2000 }),
  currency: Currency.optional().meta({ description: "For a flat reward, its currency if you name it: it must be the program's.", example: "usd" }),
  recurring: Recurring.optional(),
  productIds: ProductList.meta({ description: "Only lines of these products (processor product ids or your own product_id values).", example: ["prod_annual"] }),
  priceIds: ProductList.meta({ description: "Only lines of these prices (processor price ids).", example: [] }),
  tiers: Tiers.nullish().meta({ description: "Optional steps: a higher value once the partner passes a threshold; never retroactive. Null or omitted: none." }),
};

type TermsShape = {
  event: string;
  kind: string;
  value: number;
  recurring?: unknown;
  productIds: string[];
  priceIds: string[];
  tiers?: { steps: Array<{ threshold: number; value: number }> } | null;
};

/** The rules between fields: each breach is a 400 naming the field. */
function checkTerms(t: TermsShape, ctx: z.RefinementCtx): void {
  const issue = (path: Array<string | number>, message: string) => ctx.addIssue({ code: "custom", path, message });
  if (t.value <= 0) issue(["value"], "must be positive: a reward pays something");
  if (t.kind === "percentage" && t.value > MAX_BASIS_POINTS) issue(["value"], "is at most 10000 basis points (100 %) for a percentage reward");
  if (t.event === "lead") {
    if (t.kind !== "flat") issue(["kind"], "must be flat for a lead reward (a lead has no amount to take a share of)");
    if (t.recurring !== undefined) issue(["recurring"], "applies to sale rewards only");
    if (t.productIds.length || t.priceIds.length) issue(["productIds"], "apply to sale rewards only (a lead has no product)");
    if (t.tiers) issue(["tiers"], "apply to sale rewards only");
  }
  if (t.tiers) {
    t.tiers.steps.forEach((step, i) => {
      if (i > 0 && step.threshold <= t.tiers!.steps[i - 1].threshold)
        issue(["tiers", "steps", i, "threshold"], "must be above the previous step's: list the steps in ascending order of threshold");
      if (t.kind === "percentage" && step.value > MAX_BASIS_POINTS) issue(["tiers", "steps", i, "value"], "is at most 10000 basis points (100 %) for a percentage reward");
    });
  }
}

const ProgramId = Id.meta({ description: "The program's id.", example: 1 });
const GroupId = Id.meta({ description: "The partner group's id.", example: 2 });
const RewardId = Id.meta({ description: "The reward's id.", example: 5 });

export const ProgramIdInput = z.strictObject({ programId: ProgramId });

export const CreateRewardInput = z.strictObject({ programId: ProgramId, groupId: GroupId, ...TERMS }).superRefine(checkTerms);
export const UpdateRewardInput = z.strictObject({ programId: ProgramId, rewardId: RewardId, ...TERMS }).superRefine(checkTerms);
export const RewardIdInput = z.strictObject({ programId: ProgramId, rewardId: RewardId });

const GROUP_FIELDS = {
  name: oneLine(z.string().trim().min(1).max(100)).meta({ description: "The group's name, unique in the program.", example: "Influencers" }),
  holdDays: z.number().int().min(0).max(365).meta({
    description:
      "Days a commission of the group's partners is held before it is credited (0 to 365). It is credited by the first credit run after that (hourly by default), so 0 credits within the hour, not at the sale.",
    example: 30,
  }),
  minPayoutCents: Cents.nonnegative().meta({ description: "The smallest balance paid out to a partner of the group, in minor units.", example: 5000 }),
  rewardAs: z.enum(["cash", "account_credit", "stripe_balance"]).meta({
    description:
      "How the group's partners receive what they earn: cash (payout runs pay it by each partner's payout method), account_credit (credit in your own app, for customers who refer: a payout run sends your webhook endpoints a reward.earned event with the amount, which you apply) or stripe_balance (credit on the partner's Stripe customer balance, named by their stripe_customer_id metadata, made with the program's restricted key; reward.earned then says it was applied).",
    example: "account_credit",
  }),
  customerDiscount: z
    .strictObject({
      platform: z.enum(["stripe", "paddle"]).meta({ description: "Where the discount lives: stripe (a coupon) or paddle (a discount).", example: "stripe" }),
      id: z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9_-]{1,255}$/, "must be the Stripe coupon's id or the Paddle discount's id (dsc_...)")
        .meta({ description: "The Stripe coupon's id, or the Paddle discount's id (dsc_...): what the checkout applies.", example: "FRIENDS20" }),
      code: z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9_-]{1,100}$/, "must be a code of letters, digits, _ and -")
        .nullable()
        .default(null)
        .meta({ description: "A code the customer could type instead (a Stripe promotion code's code, a Paddle discount code), or null.", example: "FRIENDS20" }),
      description: oneLine(z.string().trim().min(1).max(200)).meta({ description: "In plain words, for the referred visitor.", example: "20% off your first month" }),
    })
    .refine((d) => d.platform !== "paddle" || d.id.startsWith("dsc_"), { message: "a Paddle discount's id starts with dsc_", path: ["id"] })
    .nullable()
    .meta({
      description:
        "A double-sided reward: the discount the customers the group's partners refer get at checkout (the snippet's svc.discount(), or POST /api/v1/track/discount for a click id); null for none.",
    }),
};
export const CreateGroupInput = z.strictObject({
  programId: ProgramId,
  name: GROUP_FIELDS.name,
  holdDays: GROUP_FIELDS.holdDays.optional().describe("Default: the default group's."),
  minPayoutCents: GROUP_FIELDS.minPayoutCents.default(0),
  customerDiscount: GROUP_FIELDS.customerDiscount.default(null),
  rewardAs: GROUP_FIELDS.rewardAs.default("cash"),
});
export const UpdateGroupInput = z.strictObject({
  programId: ProgramId,
  groupId: GroupId,
  name: GROUP_FIELDS.name.optional(),
  holdDays: GROUP_FIELDS.holdDays.optional(),
  minPayoutCents: GROUP_FIELDS.minPayoutCents.optional(),
  customerDiscount: GROUP_FIELDS.customerDiscount.optional(),
  rewardAs: GROUP_FIELDS.rewardAs.optional(),
});
export const GroupIdInput = z.strictObject({ programId: ProgramId, groupId: GroupId });

export const AssignGroupsInput = z
  .strictObject({
    programId: ProgramId,
    assignments: z
      .array(z.strictObject({ partnerId: Id.meta({ description: "The partner's id.", example: 3 }), groupId: GroupId }))
      .min(1)
      .max(500)
      .meta({ description: "Which group each partner moves to; future commissions only.", example: [{ partnerId: 3, groupId: 2 }] }),
  })
  .superRefine((input, ctx) => {
    const groupOf = new Map<number, number>();
    input.assignments.forEach(({ partnerId, groupId }, i) => {
      const other = groupOf.get(partnerId);
      if (other !== undefined && other !== groupId) {
        ctx.addIssue({
          code: "custom",
          path: ["assignments", i, "groupId"],
          message: `puts partner ${partnerId} in two groups (${other} and ${groupId}); a partner is in one group per program`,
        });
      }
      groupOf.set(partnerId, groupId);
    });
  });

export const PreviewInput = z
  .strictObject({
    programId: ProgramId,
    amountCents: Cents.positive().meta({ description: "The sale's amount in minor units of the program's currency.", example: 4900 }),
    productId: ProductRef.optional().meta({ description: "The product sold.", example: "prod_annual" }),
    priceId: ProductRef.optional().meta({ description: "The price sold.", example: "price_annual" }),
    partnerId: Id.optional().meta({ description: "Whose group and tier to use; default: the default group, no tier reached.", example: 3 }),
    groupId: Id.optional().meta({ description: "Which group's rewards to use (instead of a partner's).", example: 2 }),
    draft: z
      .strictObject({ ...TERMS })
      .superRefine(checkTerms)
      .optional()
      .describe("A reward not saved yet (the editor's live preview): the preview uses it alone."),
  })
  .refine((input) => input.partnerId === undefined || input.groupId === undefined, { message: "name a partner or a group, not both", path: ["groupId"] });

/** Internal (commissions, the portal): a partner's group and the rewards they earn by. */
export const ForPartnerInput = z.object({ programId: Id, partnerId: Id });

export const PayoutMinimumsInput = z.object({ programId: Id, partnerIds: z.array(Id).max(100_000) });
