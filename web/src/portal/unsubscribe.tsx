/**
 * The page a partner email's unsubscribe link opens (/portal/unsubscribe?token=…; docs/partners.md, "Emails"), no
 * sign-in: the token is the credential. Opening it changes nothing (mail scanners open links): it asks "Stop <these
 * emails> from <program> to <address>?", and only the Unsubscribe button unsubscribes; "Subscribe again" undoes it.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, errorMessage } from "../lib/api";
import { t } from "../lib/i18n";
import { Alert, StatusLine } from "../lib/ui";
import type { Subscription } from "./types";

type View = { kind: "loading" } | { kind: "unknown" } | { kind: "failed"; message: string } | { kind: "shown"; subscription: Subscription };

/** A token the API does not know (404), or that cannot be one (400). */
/** The category in the page's language ("emails about new commissions"). */
const wordsOf = (s: Subscription): string => t(`unsub.category.${s.category}`);

const isUnknown = (e: unknown): boolean => e instanceof ApiError && (e.status === 404 || e.status === 400);

export function Unsubscribe() {
  const token = new URLSearchParams(location.search).get("token") ?? "";
  const path = `/api/public/unsubscribe/${encodeURIComponent(token)}`;
  const [view, setView] = useState<View>({ kind: "loading" });
  const [said, setSaid] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    document.title = t("unsub.title");
    if (!token) return setView({ kind: "unknown" });
    api<Subscription>("GET", path).then(
      (subscription) => setView({ kind: "shown", subscription }),
      (e) => setView(isUnknown(e) ? { kind: "unknown" } : { kind: "failed", message: errorMessage(e) }),
    );
  }, []);

  /** Unsubscribes or subscribes again; the new heading takes the focus, so it is read out. */
  const change = async (to: "unsubscribe" | "resubscribe") => {
    setBusy(true);
    setError(null);
    try {
      const subscription = await api<Subscription>("POST", to === "unsubscribe" ? path : `${path}/resubscribe`);
      setView({ kind: "shown", subscription });
      setSaid(to === "resubscribe" ? t("unsub.resubscribed", { what: wordsOf(subscription), program: subscription.programName, recipient: subscription.recipient }) : "");
      requestAnimationFrame(() => heading.current?.focus());
    } catch (e) {
      setError(isUnknown(e) ? t("unsub.gone") : errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const s = view.kind === "shown" ? view.subscription : null;
  const title =
    view.kind === "loading"
      ? t("unsub.title")
      : view.kind === "unknown"
        ? t("unsub.unknown.title")
        : view.kind === "failed"
          ? t("unsub.failed.title")
          : s?.unsubscribed
            ? t("unsub.done.title")
            : t("unsub.ask.title", { what: s ? wordsOf(s) : "", program: s?.programName ?? "", recipient: s?.recipient ?? "" });
  return (
    <>
      <header class="top">
        <p class="brand">{t("portal.title")}</p>
      </header>
      <main>
        <section class="narrow unsubscribe" aria-labelledby="unsubscribe-title">
          <h1 id="unsubscribe-title" ref={heading} tabIndex={-1} class="focus-target">
            {title}
          </h1>
          {view.kind === "loading" && <p class="muted">{t("portal.loading")}</p>}
          {view.kind === "unknown" && <p>{t("unsub.unknown.body")}</p>}
          {view.kind === "failed" && <Alert>{t("unsub.failed.body", { message: view.message })}</Alert>}
          {s && !s.unsubscribed && (
            <>
              <p>{t("unsub.others", { program: s.programName })}</p>
              <p>
                <button type="button" disabled={busy} onClick={() => void change("unsubscribe")}>
                  {t("unsub.button")}
                </button>
              </p>
            </>
          )}
          {s?.unsubscribed && (
            <>
              <p>{t("unsub.done.body", { recipient: s.recipient, what: wordsOf(s), program: s.programName })}</p>
              <p>
                <button type="button" class="secondary" disabled={busy} onClick={() => void change("resubscribe")}>
                  {t("unsub.again")}
                </button>
              </p>
            </>
          )}
          {error && <Alert>{error}</Alert>}
          <StatusLine text={said} />
        </section>
      </main>
    </>
  );
}
