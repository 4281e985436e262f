/**
 * "Your profile": the partner's name, country and how they want to be paid (GET/PATCH /api/partner/profile). PayPal
 * asks for the PayPal email, a bank transfer for the account (IBAN, or account and routing number, and SWIFT/BIC);
 * Stripe, once saved, shows the Stripe account of each program with "Connect with Stripe" (stripe-account.tsx). A refusal (400) is shown as the API words it, and the
 * focus goes to the field it names (its message names it as, say, 'bank.iban'); a save is announced.
 */
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, errorMessage } from "../lib/api";
import { LOCALE_NAMES, LOCALES, isLocale, type MessageKey } from "../../../shared/i18n";
import { language, t } from "../lib/i18n";
import { Alert, Field } from "../lib/ui";
import { countries } from "./countries";
import { StripeAccounts, type StripeReturn } from "./stripe-account";
import type { BankDetails, PayoutMethod, PortalProgram, Profile } from "./types";

const PROFILE_PATH = "/api/partner/profile";

const METHODS: Array<[PayoutMethod, MessageKey, MessageKey]> = [
  ["paypal", "profile.method.paypal", "profile.method.paypal.hint"],
  ["bank", "profile.method.bank", "profile.method.bank.hint"],
  ["stripe", "profile.method.stripe", "profile.method.stripe.hint"],
];

const BANK_FIELDS: Array<[keyof BankDetails, MessageKey]> = [
  ["accountHolder", "profile.bank.accountHolder"],
  ["iban", "profile.bank.iban"],
  ["accountNumber", "profile.bank.accountNumber"],
  ["routingNumber", "profile.bank.routingNumber"],
  ["swift", "profile.bank.swift"],
];

/** The form's values: every field as the text in its box. */
interface Draft {
  name: string;
  country: string;
  payoutMethod: PayoutMethod | "";
  /** "" : the browser's language. */
  locale: string;
  paypalEmail: string;
  bank: Record<keyof BankDetails, string>;
}

function draftOf(p: Profile): Draft {
  return {
    name: p.name,
    country: p.country ?? "",
    payoutMethod: p.payoutMethod ?? "",
    locale: p.locale ?? "",
    paypalEmail: p.paypalEmail ?? "",
    bank: {
      accountHolder: p.bank?.accountHolder ?? "",
      iban: p.bank?.iban ?? "",
      accountNumber: p.bank?.accountNumber ?? "",
      routingNumber: p.bank?.routingNumber ?? "",
      swift: p.bank?.swift ?? "",
    },
  };
}

const orNull = (text: string): string | null => (text.trim() === "" ? null : text.trim());

/** The change to send: the profile and the chosen method's details (another method's saved details are left alone). */
function patchOf(d: Draft): Record<string, unknown> {
  const patch: Record<string, unknown> = { name: d.name.trim(), country: d.country || null, payoutMethod: d.payoutMethod || null, locale: isLocale(d.locale) ? d.locale : null };
  if (d.payoutMethod === "paypal") patch.paypalEmail = orNull(d.paypalEmail);
  if (d.payoutMethod === "bank") patch.bank = Object.fromEntries(BANK_FIELDS.map(([key]) => [key, orNull(d.bank[key])]));
  return patch;
}

/** The form's element for each field the API may name. */
const FIELD_IDS: Record<string, string> = {
  name: "profile-name",
  country: "profile-country",
  locale: "profile-language",
  payoutMethod: "method-paypal",
  paypalEmail: "profile-paypal-email",
  bank: "bank-accountHolder",
  ...Object.fromEntries(BANK_FIELDS.map(([key]) => [`bank.${key}`, `bank-${key}`])),
};

/** The field a refusal names ('bank.iban' in "Invalid 'bank.iban': …"), the most precise first; null when none. */
export function fieldNamed(message: string): string | null {
  const quoted = /'([A-Za-z.]+)'/.exec(message)?.[1];
  if (quoted && FIELD_IDS[quoted]) return quoted;
  const names = Object.keys(FIELD_IDS).sort((a, b) => b.length - a.length);
  return names.find((name) => new RegExp(`(^|[^A-Za-z.])${name.replace(".", "\\.")}($|[^A-Za-z])`).test(message)) ?? null;
}

export function ProfileView({
  programs,
  stripeReturn,
  onSaved,
  onError,
}: {
  /** The programs the partner is approved in (a Stripe account is per program). */
  programs: PortalProgram[];
  /** Opened by Stripe's return or refresh link. */
  stripeReturn: StripeReturn;
  onSaved: (profile: Profile) => void;
  onError: (error: unknown) => void;
}) {
  const [profile, setProfile] = useState<Profile | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [problem, setProblem] = useState<{ message: string; field: string | null } | null>(null);
  const [said, setSaid] = useState("");
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api<Profile>("GET", PROFILE_PATH).then(
      (p) => {
        setProfile(p);
        setDraft(draftOf(p));
      },
      (e) => onError(e),
    );
  }, []);

  // The refusal's field gets the focus once the alert is on the page.
  useEffect(() => {
    if (problem?.field) document.getElementById(FIELD_IDS[problem.field])?.focus();
  }, [problem]);

  const set = (change: Partial<Draft>) => {
    if (draft) setDraft({ ...draft, ...change });
    setSaid("");
  };
  const setBank = (key: keyof BankDetails, value: string) => draft && set({ bank: { ...draft.bank, [key]: value } });
  const text = (e: Event) => (e.currentTarget as HTMLInputElement).value;

  const save = async (event: Event) => {
    event.preventDefault();
    if (!draft) return;
    if (!draft.name.trim()) {
      setProblem({ message: t("profile.enterName"), field: "name" });
      return;
    }
    setBusy(true);
    setProblem(null);
    setSaid("");
    try {
      const saved = await api<Profile>("PATCH", PROFILE_PATH, patchOf(draft));
      setProfile(saved);
      setDraft(draftOf(saved));
      // First: a new language applies at once, and the announcement is in it.
      onSaved(saved);
      setSaid(t("profile.saved"));
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return onError(e);
      const message = errorMessage(e);
      setProblem({ message, field: e instanceof ApiError && e.status === 400 ? fieldNamed(message) : null });
    } finally {
      setBusy(false);
    }
  };

  const invalid = (field: string) => (problem?.field === field || problem?.field?.startsWith(`${field}.`) ? "true" : undefined);

  // The heading stays put while the profile loads: the header's "Your profile" link moves the focus to it.
  return (
    <section id="profile" aria-labelledby="profile-title" aria-busy={!draft}>
      <h2 id="profile-title" tabIndex={-1} class="focus-target">
        {t("profile.title")}
      </h2>
      {!profile || !draft ? (
        <p class="muted">{t("portal.loading")}</p>
      ) : (
        <form class="profile" aria-labelledby="profile-title" onSubmit={save} noValidate>
          <p class="muted">
            {t("profile.intro")}
            {profile.email ? ` ${t("profile.signsInAs", { email: profile.email })}` : ""}
          </p>
          <div class="fields">
            <Field label={t("profile.name")} id="profile-name" autocomplete="name" required value={draft.name} aria-invalid={invalid("name")} onInput={(e) => set({ name: text(e) })} />
            <div class="field">
              <label for="profile-country">{t("profile.country")}</label>
              <select id="profile-country" autocomplete="country" value={draft.country} aria-invalid={invalid("country")} onChange={(e) => set({ country: text(e) })}>
                <option value="">{t("profile.notGiven")}</option>
                {countries(language()).map(([code, name]) => (
                  <option key={code} value={code}>
                    {name}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="profile-language">{t("profile.language")}</label>
              <select id="profile-language" value={draft.locale} aria-invalid={invalid("locale")} onChange={(e) => set({ locale: text(e) })}>
                <option value="">{t("profile.language.browser")}</option>
                {LOCALES.map((code) => (
                  <option key={code} value={code} lang={code}>
                    {LOCALE_NAMES[code]}
                  </option>
                ))}
              </select>
            </div>
          </div>
          <fieldset>
            <legend>{t("profile.payoutMethod")}</legend>
            {METHODS.map(([value, label, hint]) => (
              <div key={value} class="choice">
                <input
                  type="radio"
                  id={`method-${value}`}
                  name="payoutMethod"
                  value={value}
                  checked={draft.payoutMethod === value}
                  aria-describedby={`method-${value}-hint`}
                  onChange={() => set({ payoutMethod: value })}
                />
                <div>
                  <label for={`method-${value}`}>{t(label)}</label>
                  <p class="hint muted" id={`method-${value}-hint`}>
                    {t(hint)}
                  </p>
                </div>
              </div>
            ))}
          </fieldset>
          {draft.payoutMethod === "paypal" && (
            <div class="fields">
              <Field
                label={t("profile.paypalEmail")}
                id="profile-paypal-email"
                type="email"
                autocomplete="email"
                spellcheck={false}
                value={draft.paypalEmail}
                aria-invalid={invalid("paypalEmail")}
                onInput={(e) => set({ paypalEmail: text(e) })}
              />
            </div>
          )}
          {draft.payoutMethod === "bank" && (
            <fieldset aria-describedby="bank-hint">
              <legend>{t("profile.bank")}</legend>
              <p class="hint muted" id="bank-hint">
                {t("profile.bank.hint")}
              </p>
              <div class="fields">
                {BANK_FIELDS.map(([key, label]) => (
                  <Field
                    key={key}
                    label={t(label)}
                    id={`bank-${key}`}
                    autocomplete={key === "accountHolder" ? "name" : "off"}
                    spellcheck={false}
                    value={draft.bank[key]}
                    aria-invalid={invalid(`bank.${key}`)}
                    onInput={(e) => setBank(key, text(e))}
                  />
                ))}
              </div>
            </fieldset>
          )}
          {draft.payoutMethod === "stripe" && profile.payoutMethod !== "stripe" && <p class="hint muted">{t("profile.stripeSaveFirst")}</p>}
          {problem && <Alert>{problem.message}</Alert>}
          <p class="save-row">
            <button type="submit" disabled={busy}>
              {t("profile.save")}
            </button>{" "}
            <span class="ok" role="status" aria-live="polite">
              {said}
            </span>
          </p>
        </form>
      )}
      {profile?.payoutMethod === "stripe" && <StripeAccounts programs={programs} returned={stripeReturn} onError={onError} />}
    </section>
  );
}
