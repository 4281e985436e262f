/**
 * The page a partner email's unsubscribe link opens (/portal/unsubscribe?token=…; docs/partners.md, "Emails"), no
 * sign-in: the token is the credential. Opening it changes nothing (mail scanners open links): it asks "Stop <these
 * emails> from <program> to <address>?", and only the Unsubscribe button unsubscribes; "Subscribe again" undoes it.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, errorMessage } from "../lib/api";
import { Alert, StatusLine } from "../lib/ui";
import type { Subscription } from "./types";

type View = { kind: "loading" } | { kind: "unknown" } | { kind: "failed"; message: string } | { kind: "shown"; subscription: Subscription };

/** A token the API does not know (404), or that cannot be one (400). */
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
    document.title = "Partner emails";
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
      setSaid(to === "resubscribe" ? `You are subscribed again: ${subscription.categoryWords} from ${subscription.programName} come to ${subscription.recipient} again.` : "");
      requestAnimationFrame(() => heading.current?.focus());
    } catch (e) {
      setError(isUnknown(e) ? "This link is no longer known: nothing was changed." : errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const s = view.kind === "shown" ? view.subscription : null;
  const title =
    view.kind === "loading"
      ? "Partner emails"
      : view.kind === "unknown"
        ? "This unsubscribe link is not known"
        : view.kind === "failed"
          ? "The link could not be read"
          : s?.unsubscribed
            ? "You are unsubscribed"
            : `Stop ${s?.categoryWords} from ${s?.programName} to ${s?.recipient}?`;
  return (
    <>
      <header class="top">
        <p class="brand">Partner portal</p>
      </header>
      <main>
        <section class="narrow unsubscribe" aria-labelledby="unsubscribe-title">
          <h1 id="unsubscribe-title" ref={heading} tabIndex={-1} class="focus-target">
            {title}
          </h1>
          {view.kind === "loading" && <p class="muted">Loading…</p>}
          {view.kind === "unknown" && <p>The link may be cut off or mistyped: open it again from the email, or copy the whole address into the browser. Nothing was changed.</p>}
          {view.kind === "failed" && <Alert>{`${view.message} Nothing was changed: try again in a moment.`}</Alert>}
          {s && !s.unsubscribed && (
            <>
              <p>Other emails from {s.programName} still come; a payout that failed is always told.</p>
              <p>
                <button type="button" disabled={busy} onClick={() => void change("unsubscribe")}>
                  Unsubscribe
                </button>
              </p>
            </>
          )}
          {s?.unsubscribed && (
            <>
              <p>
                {s.recipient} gets no more {s.categoryWords} from {s.programName}. Other emails from {s.programName} still come.
              </p>
              <p>
                <button type="button" class="secondary" disabled={busy} onClick={() => void change("resubscribe")}>
                  Subscribe again
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
