/**
 * Partners' coupon codes (docs/processor-webhooks.md, "Coupon codes"): the Stripe side of creating one with the
 * program's restricted key (an existing promotion code found by id or code, or a new one created on a coupon of the
 * merchant's), then the attribution service stores it; and the merchant's coupons for the console's picker.
 */
import type { Context } from "moleculer";
import type Stripe from "stripe";
import { AppError, InvalidRequestError, ServiceUnavailableError } from "../../shared/errors";
import { typedCall } from "../../shared/typed-call";
import type { AttributionContract } from "../attribution/contract";
import type { ProgramsContract } from "../programs/contract";
import type { CouponView } from "./contract";
import { isKeyRefusal, isTemporary, stripeMessage } from "./partner-payouts";
import type { ProcessorRepository } from "./repository";
import type * as S from "./schemas";
import { failureOf, stripeClient } from "./stripe-api";
import type { Input } from "../../shared/endpoint";

const call = typedCall<AttributionContract & ProgramsContract>();

export interface CouponContext {
  repo: ProcessorRepository;
  stripeApiUrl: string;
}

/** The picker lists at most this many coupons (Stripe's pages of 100). */
export const MAX_COUPONS = 500;

/** A client with the program's key; without one, 409 processor_key_missing naming what needs it. */
async function programStripe(c: CouponContext, programId: number, what: string): Promise<Stripe> {
  const key = await c.repo.getApiKey(programId);
  if (!key) {
    throw new AppError(
      "processor_key_missing",
      `Program ${programId} has no restricted Stripe key to ${what} with. Add the key (PUT /api/programs/${programId}/processor/api-key), then try again; a manual code needs none.`,
    );
  }
  return stripeClient(key.apiKey, c.stripeApiUrl);
}

/**
 * A Stripe call for the merchant, its failures as their answer: a key Stripe refuses is 422 processor_key_refused
 * (with the permission Stripe names), Stripe unreachable 503; `refused` maps Stripe's other refusals.
 */
async function stripeCall<T>(programId: number, what: string, permission: string, run: () => Promise<T>, refused: (err: unknown) => Error): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isKeyRefusal(err)) {
      throw new AppError("processor_key_refused", `Stripe refused program ${programId}'s restricted key when ${what}: ${stripeMessage(err)} Give the key ${permission}, then try again.`);
    }
    if (isTemporary(err)) throw new ServiceUnavailableError(`Stripe could not be reached when ${what} (${stripeMessage(err)}). Nothing changed; try again in a minute.`);
    throw refused(err);
  }
}

type Promotion = Pick<Stripe.PromotionCode, "id" | "code" | "active" | "promotion">;

const couponIdOf = (p: Promotion): string | null => {
  const coupon = p.promotion?.coupon;
  return typeof coupon === "string" ? coupon : (coupon?.id ?? null);
};

/** An existing promotion code by its id (`promo_...`) or its customer-facing code (an active one); 422 unknown_promotion_code otherwise. */
async function findPromotionCode(stripe: Stripe, programId: number, promotionCode: string): Promise<Promotion> {
  const unknown = new AppError(
    "unknown_promotion_code",
    `The program's Stripe account has no ${promotionCode.startsWith("promo_") ? "promotion code" : "active promotion code"} '${promotionCode}'. Check it in your Stripe dashboard (Product catalog, Coupons), or create the code with source stripe_created.`,
  );
  const what = `looking up promotion code '${promotionCode}'`;
  const permission = "read access to Promotion Codes";
  if (promotionCode.startsWith("promo_")) {
    return stripeCall(
      programId,
      what,
      permission,
      () => stripe.promotionCodes.retrieve(promotionCode),
      (err) => (failureOf(err) === "missing" ? unknown : refusal(what, err)),
    );
  }
  const found = await stripeCall(
    programId,
    what,
    permission,
    () => stripe.promotionCodes.list({ code: promotionCode, active: true, limit: 1 }),
    (err) => refusal(what, err),
  );
  if (!found.data.length) throw unknown;
  return found.data[0];
}

const refusal = (what: string, err: unknown) => new InvalidRequestError(`Stripe refused ${what}: ${stripeMessage(err)}`);

/**
 * A partner's new code (`POST /api/programs/:programId/coupon-codes`): manual as it is; stripe_existing once Stripe
 * has the promotion code (its id and code stored); stripe_created after the attribution checks (partner approved,
 * code free) and then Stripe's creation, made once per program, code and coupon (idempotency key).
 */
export async function createCouponCode(c: CouponContext, ctx: Context, input: Input<typeof S.CreateCouponCodeInput>) {
  const { programId, partnerId } = input;
  await call(ctx, "programs.get", { programId });
  if (input.source === "manual") return call(ctx, "attribution.createCouponCode", { programId, partnerId, code: input.code!, source: "manual" });

  if (input.source === "stripe_existing") {
    const stripe = await programStripe(c, programId, `look up promotion code '${input.promotionCode}'`);
    const promotion = await findPromotionCode(stripe, programId, input.promotionCode!);
    return call(ctx, "attribution.createCouponCode", {
      programId,
      partnerId,
      code: promotion.code,
      source: "stripe_existing",
      stripePromotionCodeId: promotion.id,
      stripeCouponId: couponIdOf(promotion),
    });
  }

  const code = input.code!;
  const couponId = input.couponId!;
  const stripe = await programStripe(c, programId, `create promotion code '${code}'`);
  // Before anything is created in Stripe: the partner may have it, and the code is free in the program.
  await call(ctx, "attribution.checkCouponCode", { programId, partnerId, code });
  const what = `creating promotion code '${code}' on coupon '${couponId}'`;
  const promotion = await stripeCall(
    programId,
    what,
    "write access to Promotion Codes",
    () =>
      stripe.promotionCodes.create(
        { promotion: { type: "coupon", coupon: couponId }, code, metadata: { svc_program_id: String(programId), svc_partner_id: String(partnerId) } },
        { idempotencyKey: `coupon-code-${programId}-${code.toUpperCase()}-${couponId}` },
      ),
    (err) => {
      const e = err as { param?: string };
      if (failureOf(err) === "missing") {
        return new AppError("unknown_coupon", `The program's Stripe account has no coupon '${couponId}'. Pick one of the coupons GET /api/programs/${programId}/processor/coupons lists.`);
      }
      if (e.param === "code") {
        return new AppError("coupon_code_taken", `Stripe refused the code: ${stripeMessage(err)} If that promotion code is the one you mean, add it with source stripe_existing.`);
      }
      return refusal(what, err);
    },
  );
  return call(ctx, "attribution.createCouponCode", {
    programId,
    partnerId,
    code: promotion.code,
    source: "stripe_created",
    stripePromotionCodeId: promotion.id,
    stripeCouponId: couponIdOf(promotion) ?? couponId,
  });
}

/** The merchant's coupons, for picking one to create a code on (at most MAX_COUPONS, newest first as Stripe lists them). */
export async function listCoupons(c: CouponContext, programId: number): Promise<{ programId: number; data: CouponView[]; hasMore: boolean }> {
  const stripe = await programStripe(c, programId, "list the coupons");
  const what = "listing the coupons";
  const coupons = await stripeCall(
    programId,
    what,
    "read access to Coupons",
    async () => {
      const found: Stripe.Coupon[] = [];
      for await (const coupon of stripe.coupons.list({ limit: 100 })) {
        found.push(coupon);
        if (found.length > MAX_COUPONS) break;
      }
      return found;
    },
    (err) => refusal(what, err),
  );
  return {
    programId,
    data: coupons.slice(0, MAX_COUPONS).map((k) => ({
      id: k.id,
      name: k.name ?? null,
      percentOff: k.percent_off ?? null,
      amountOff: k.amount_off ?? null,
      currency: k.currency ?? null,
      duration: k.duration,
      durationInMonths: k.duration_in_months ?? null,
      valid: k.valid,
    })),
    hasMore: coupons.length > MAX_COUPONS,
  };
}
