/**
 * "Add a coupon code" (POST /api/programs/:programId/coupon-codes), three ways: a code of the merchant's only; an
 * existing Stripe promotion code, by id or by code; or a promotion code created in Stripe on a coupon picked from the
 * merchant's coupons (GET /processor/coupons, loaded when that way is chosen). A refusal is shown beside the field it
 * is about, in words; without the program's Stripe key, Stripe's ways point to Settings, Stripe.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api, ApiError, invalidField, query, type Page } from "../../lib/api";
import { Alert, Field, SelectField, useAsync } from "../../lib/ui";
import { screenHref, useConsole } from "../session";
import { couponText, isKeyMissing, refusalText, SOURCES, type CouponCode, type CouponCodeSource, type StripeCoupon } from "./model";

type Values = Record<"code" | "promotionCode" | "couponId", string>;
const EMPTY: Values = { code: "", promotionCode: "", couponId: "" };

/** What each way needs, with the words for a missing value (checked here: the API's rule names its own fields). */
const NEEDS: Record<CouponCodeSource, Array<[keyof Values, string]>> = {
  manual: [["code", "Enter the code customers type."]],
  stripe_existing: [["promotionCode", "Enter the promotion code's id (promo_…) or its code."]],
  stripe_created: [
    ["code", "Enter the code customers will type."],
    ["couponId", "Pick the coupon the code gives."],
  ],
};

export function AddCouponCode({ partnerId, added }: { partnerId: number; added: (code: CouponCode) => void }) {
  const { program, programPath } = useConsole();
  const [source, setSource] = useState<CouponCodeSource>("manual");
  const [values, setValues] = useState<Values>(EMPTY);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<keyof Values, ComponentChildren>>>({});
  const [error, setError] = useState<ComponentChildren>(null);
  const [busy, setBusy] = useState(false);
  const creating = source === "stripe_created";
  // The merchant's coupons, when a code is to be created on one (a refusal is kept whole: a missing key gets a link).
  const coupons = useAsync(
    () => (creating ? api<{ data: StripeCoupon[]; hasMore: boolean }>("GET", programPath("/processor/coupons")).catch((e: unknown) => ({ refusal: e })) : Promise.resolve(null)),
    [program.id, creating],
  );
  const couponList = coupons.data && "data" in coupons.data ? coupons.data : null;
  const couponRefusal = coupons.data && "refusal" in coupons.data ? coupons.data.refusal : null;

  const keyMissing = (
    <>
      Stripe codes need the program's restricted Stripe key, and none is set. <a href={screenHref("/settings/stripe", program.id)}>Add it in Settings, Stripe</a>, then come back. A code of
      yours needs none.
    </>
  );

  const set = (field: keyof Values) => (event: Event) => setValues({ ...values, [field]: (event.currentTarget as HTMLInputElement | HTMLSelectElement).value });
  const choose = (next: CouponCodeSource) => {
    setSource(next);
    setFieldErrors({});
    setError(null);
  };

  /** Why a code is taken: a live code of the program (whose), or an active promotion code at Stripe. */
  const takenText = async (typed: string): Promise<ComponentChildren> => {
    const live = await api<Page<CouponCode>>("GET", programPath(`/coupon-codes${query({ archived: false, limit: 100 })}`)).then(
      (page) => page.data.find((c) => c.codeKey === typed.toUpperCase() || c.stripePromotionCodeId === typed),
      () => undefined,
    );
    if (live?.partnerId === partnerId) return `“${live.code}” is already one of this partner's live codes.`;
    if (live) return `“${live.code}” is already a live code of partner #${live.partnerId} in this program: archive it on their screen first, or choose another code.`;
    return `Stripe already has an active promotion code “${typed}”. If it is the one you mean, add it as an existing Stripe promotion code; otherwise choose another code.`;
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    setError(null);
    const trimmed = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v.trim()])) as Values;
    const missing = NEEDS[source].filter(([field]) => !trimmed[field]);
    setFieldErrors(Object.fromEntries(missing));
    if (missing.length) return form.querySelector<HTMLElement>(`[name="${missing[0][0]}"]`)?.focus();
    setBusy(true);
    const typed = source === "stripe_existing" ? trimmed.promotionCode : trimmed.code;
    try {
      const body = Object.fromEntries(NEEDS[source].map(([field]) => [field, trimmed[field]]));
      const code = await api<CouponCode>("POST", programPath("/coupon-codes"), { partnerId, source, ...body });
      setValues(EMPTY);
      added(code);
    } catch (e) {
      // The field a refusal is about; the others are said above the button.
      const invalid = invalidField(e);
      const code = e instanceof ApiError ? e.code : "";
      const field: keyof Values | null =
        invalid && invalid.field in EMPTY
          ? (invalid.field as keyof Values)
          : code === "coupon_code_taken"
            ? source === "stripe_existing"
              ? "promotionCode"
              : "code"
            : code === "unknown_promotion_code"
              ? "promotionCode"
              : code === "unknown_coupon"
                ? "couponId"
                : null;
      const text = invalid && field ? `It ${invalid.rule}.` : code === "coupon_code_taken" ? await takenText(typed) : refusalText(e, typed);
      if (field) {
        setFieldErrors({ [field]: text });
        form.querySelector<HTMLElement>(`[name="${field}"]`)?.focus();
      } else setError(isKeyMissing(e) ? keyMissing : text);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="add-coupon-code" aria-labelledby="add-coupon-code-title" onSubmit={submit} noValidate>
      <h3 id="add-coupon-code-title">Add a coupon code</h3>
      <fieldset>
        <legend>How</legend>
        {SOURCES.map(([value, label, hint]) => (
          <div key={value} class="choice">
            <input
              type="radio"
              id={`coupon-source-${value}`}
              name="source"
              value={value}
              checked={source === value}
              aria-describedby={`coupon-source-${value}-hint`}
              onChange={() => choose(value)}
            />
            <div>
              <label for={`coupon-source-${value}`}>{label}</label>
              <p class="hint muted" id={`coupon-source-${value}-hint`}>
                {hint}
              </p>
            </div>
          </div>
        ))}
      </fieldset>
      <div class="fields">
        {source === "stripe_existing" ? (
          <Field
            label="Promotion code (id or code)"
            id="coupon-promotion-code"
            name="promotionCode"
            maxLength={255}
            autocomplete="off"
            placeholder="promo_… or JANE10"
            error={fieldErrors.promotionCode}
            value={values.promotionCode}
            onInput={set("promotionCode")}
          />
        ) : (
          <Field
            label="Code"
            id="coupon-code"
            name="code"
            maxLength={40}
            autocomplete="off"
            placeholder="JANE10"
            hint={creating ? "3 to 40 letters, digits or '-'." : "3 to 40 letters, digits, '-' or '_'; customers may type it in any case."}
            error={fieldErrors.code}
            value={values.code}
            onInput={set("code")}
          />
        )}
        {creating && couponList && (
          <SelectField
            label="Coupon"
            id="coupon-coupon"
            name="couponId"
            error={fieldErrors.couponId}
            value={values.couponId}
            onChange={set("couponId")}
            options={[["", couponList.data.length ? "Pick a coupon" : "No coupon in Stripe yet"], ...couponList.data.map((c): [string, string] => [c.id, couponText(c)])]}
          />
        )}
      </div>
      {creating && coupons.loading && <p class="muted">Loading your Stripe coupons…</p>}
      {creating && couponList?.hasMore && <p class="muted">Only your first {couponList.data.length} coupons are listed.</p>}
      {creating && couponRefusal !== null && <Alert>{isKeyMissing(couponRefusal) ? keyMissing : refusalText(couponRefusal, "")}</Alert>}
      {error && <Alert>{error}</Alert>}
      <p>
        <button type="submit" disabled={busy || (creating && !couponList)}>
          Add coupon code
        </button>
      </p>
    </form>
  );
}
