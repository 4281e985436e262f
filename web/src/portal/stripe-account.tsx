/**
 * The profile's Stripe part, for a partner paid through Stripe (docs/payouts.md, "Stripe Connect"): per approved
 * program, the state of their Stripe account there (GET /api/partner/programs/:programId/payout-account) and the
 * button that opens Stripe's onboarding (POST .../stripe-onboarding answers the link; the page goes there). Stripe
 * sends them back to /portal?stripe=return: the state is read again and the page says so.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, errorMessage } from "../lib/api";
import { t } from "../lib/i18n";
import { Alert, useAsync } from "../lib/ui";
import { programPath } from "./parts";
import type { PayoutAccount, PortalProgram } from "./types";

/** Why the portal was opened from Stripe: back from onboarding, or its link expired (then a new one is needed). */
export type StripeReturn = "return" | "refresh" | null;

/** `?stripe=return` or `?stripe=refresh` in the address (Stripe's return and refresh URLs), or null. */
export function stripeReturnOf(search: string): StripeReturn {
  const value = new URLSearchParams(search).get("stripe");
  return value === "return" || value === "refresh" ? value : null;
}

export function StripeAccounts({ programs, returned, onError }: { programs: PortalProgram[]; returned: StripeReturn; onError: (error: unknown) => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Back from Stripe: the part's heading takes the focus, so the refreshed state is read next.
  useEffect(() => {
    if (returned) heading.current?.focus();
  }, [returned]);
  return (
    <div id="stripe-accounts" role="region" aria-labelledby="stripe-title" class="stripe-accounts">
      <h3 id="stripe-title" ref={heading} tabIndex={-1} class="focus-target">
        {t("stripe.title")}
      </h3>
      {returned === "return" && (
        <p class="ok" role="status">
          {t("stripe.back")}
        </p>
      )}
      {returned === "refresh" && (
        <p class="warn" role="status">
          {t("stripe.expired")}
        </p>
      )}
      <p class="muted">{t("stripe.intro")}</p>
      {programs.length === 0 ? (
        <p>{t("stripe.noProgram")}</p>
      ) : (
        <ul class="rows stripe-programs">
          {programs.map((p) => (
            <StripeProgram key={p.programId} program={p} onError={onError} showName={programs.length > 1} />
          ))}
        </ul>
      )}
    </div>
  );
}

/** The account's state in words. */
function stateText(account: PayoutAccount["stripe"]): string {
  if (!account) return t("stripe.state.none");
  if (account.ready) return t("stripe.state.ready", { account: account.accountId });
  if (account.detailsSubmitted) return t("stripe.state.submitted");
  return t("stripe.state.unfinished");
}

function StripeProgram({ program, showName, onError }: { program: PortalProgram; showName: boolean; onError: (error: unknown) => void }) {
  const account = useAsync(() => api<PayoutAccount>("GET", programPath(program.programId, "/payout-account")), [program.programId]);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const onboard = async () => {
    setBusy(true);
    setProblem(null);
    try {
      const { url } = await api<{ url: string }>("POST", programPath(program.programId, "/stripe-onboarding"));
      location.assign(url);
    } catch (e) {
      setBusy(false);
      if (e instanceof ApiError && e.status === 401) return onError(e);
      setProblem(errorMessage(e));
    }
  };

  const stripe = account.data?.stripe ?? null;
  const label = t(stripe ? "stripe.continue" : "stripe.connect");
  return (
    <li data-program={String(program.programId)} class="stripe-program">
      <div>
        {showName && <strong>{program.name}: </strong>}
        <span class={stripe?.ready ? "ok state" : "state"}>{account.data ? stateText(stripe) : account.error ? "" : t("portal.loading")}</span>
        {account.error && <Alert>{account.error}</Alert>}
        {problem && <Alert>{problem}</Alert>}
      </div>
      {account.data && !stripe?.ready && (
        <button type="button" disabled={busy} onClick={() => void onboard()} aria-label={showName ? t("stripe.forProgram", { action: label, program: program.name }) : undefined}>
          {busy ? t("stripe.opening") : label}
        </button>
      )}
    </li>
  );
}
