/**
 * Signing in to the portal: the form that emails a one-time link (POST /api/partner/auth/link), the "check your
 * email" view, and the sign-in the link itself does (/portal/sign-in#token=…: the token stays in the fragment, which
 * browsers never send to a server, until it is posted once).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorMessage } from "../lib/api";
import { t } from "../lib/i18n";
import { Field } from "../lib/ui";

/**
 * Takes the token out of the address (the bar then shows /portal, or /portal#profile) and signs in with it. Resolves
 * to null without a token or when it signed in, else to the message saying why not (the link was used, expired…).
 */
export async function signInFromLink(): Promise<string | null> {
  const match = /[#&]token=([A-Za-z0-9_-]+)/.exec(location.hash);
  // The portal's own parts (#profile, #programs) stay in the address; anything else leaves it.
  const part = /^#(profile|programs)$/.test(location.hash) ? location.hash : "";
  if (location.pathname !== "/portal" || location.hash !== part) history.replaceState(null, "", `/portal${part}`);
  if (!match) return null;
  try {
    await api("POST", "/api/partner/auth/sign-in", { token: match[1] });
    return null;
  } catch (e) {
    return errorMessage(e);
  }
}

/**
 * The form asking for a link. `focus` moves the focus into it when it appears after something the person did (signing
 * out, "Use another email"), never on the first load.
 */
export function SignInForm({ email, focus, onSent, onError }: { email: string; focus?: "heading" | "email"; onSent: (email: string) => void; onError: (message: string | null) => void }) {
  const [value, setValue] = useState(email);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (focus === "heading") heading.current?.focus();
    if (focus === "email") document.getElementById("email")?.focus();
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const address = value.trim();
    if (!address) {
      onError(t("signIn.enterEmail"));
      document.getElementById("email")?.focus();
      return;
    }
    onError(null);
    setBusy(true);
    try {
      await api("POST", "/api/partner/auth/link", { email: address });
      onSent(address);
    } catch (e) {
      onError(errorMessage(e));
      setBusy(false);
    }
  };
  return (
    <form class="card" aria-labelledby="sign-in-title" onSubmit={submit} noValidate>
      <h2 id="sign-in-title" ref={heading} tabIndex={-1} class="focus-target">
        {t("signIn.title")}
      </h2>
      <p class="muted">{t("signIn.intro")}</p>
      <Field
        label={t("signIn.email")}
        id="email"
        name="email"
        type="email"
        autocomplete="email"
        required
        size={32}
        value={value}
        onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
      />
      <p>
        <button type="submit" disabled={busy}>
          {t("signIn.submit")}
        </button>
      </p>
    </form>
  );
}

/** After the link was asked for: where it went, and a way back to the form. */
export function CheckEmail({ email, onAnother }: { email: string; onAnother: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section aria-labelledby="check-email-title">
      <h2 id="check-email-title" ref={heading} tabIndex={-1} class="focus-target">
        {t("checkEmail.title")}
      </h2>
      <p>
        {t("checkEmail.before")} <strong class="address">{email}</strong> {t("checkEmail.after")}
      </p>
      <p>
        <button type="button" class="secondary" onClick={onAnother}>
          {t("checkEmail.another")}
        </button>
      </p>
    </section>
  );
}
