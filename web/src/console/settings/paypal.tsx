/**
 * Settings, PayPal payouts (docs/payouts.md, "PayPal"): the program's PayPal REST app credentials. Without them a
 * payout run's PayPal payouts go in the run's file, uploaded at PayPal by hand; with them each run sends its PayPal
 * payouts as one batch through PayPal's Payouts API. Shows the credentials' state (mode, a hint of the client id,
 * PayPal's last refusal), the form to enter them (checked with PayPal before they are kept), and their removal,
 * which asks once more.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { dateTime } from "../../lib/format";
import { Alert, Field, SelectField, StatusLine, useAsync } from "../../lib/ui";
import { useConsole } from "../session";

interface PaypalCredentials {
  programId: number;
  configured: boolean;
  mode: "sandbox" | "live" | null;
  clientIdHint: string | null;
  setAt: string | null;
  failedAt: string | null;
  failure: string | null;
}

const MODES: Array<[string, string]> = [
  ["sandbox", "Sandbox (tests)"],
  ["live", "Live (real money)"],
];

export function PaypalSettings() {
  const { program, programPath, can } = useConsole();
  const writable = can("payouts:write");
  const [round, setRound] = useState(0);
  const [said, setSaid] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  /** The environment chosen in the form; until then, the saved one. */
  const [mode, setMode] = useState<string | null>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const removeButton = useRef<HTMLButtonElement>(null);
  const state = useAsync(() => api<PaypalCredentials>("GET", programPath("/processor/paypal")), [program.id, round]);

  useEffect(() => {
    if (confirming) cancel.current?.focus();
  }, [confirming]);

  /** Cancel: the Remove button is back, with the focus. */
  const stopConfirming = () => {
    setConfirming(false);
    requestAnimationFrame(() => removeButton.current?.focus());
  };

  const save = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const field = (name: string) => String(data.get(name) ?? "").trim();
    setBusy(true);
    setError(null);
    setSaid("");
    try {
      await api("PUT", programPath("/processor/paypal"), { clientId: field("clientId"), clientSecret: field("clientSecret"), mode: field("mode") });
      // The form starts again empty (its key is the round), showing the saved environment.
      setMode(null);
      setSaid("PayPal credentials saved: PayPal accepted them. Runs send their PayPal payouts through PayPal from now on.");
      setRound((n) => n + 1);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    setError(null);
    setSaid("");
    try {
      await api("DELETE", programPath("/processor/paypal"));
      setConfirming(false);
      setSaid("PayPal credentials removed: the next runs put their PayPal payouts in the run's file again.");
      setRound((n) => n + 1);
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  if (state.error) return <Alert>{state.error}</Alert>;
  const c = state.data;
  if (!c) return <p class="muted">Loading…</p>;
  const environment = c.mode === "live" ? "live" : "sandbox";
  return (
    <>
      <section aria-labelledby="paypal-state">
        <h2 id="paypal-state">PayPal payouts</h2>
        <p>
          Without credentials, a payout run's PayPal payouts go in the run's PayPal file, which you upload at PayPal and mark paid here. With them, each run sends its PayPal payouts as one
          batch through PayPal's Payouts API, and PayPal's answers mark them paid or failed.
        </p>
        <dl class="facts">
          <dt>Credentials</dt>
          <dd id="paypal-credentials">
            {c.configured ? `Entered (client id ${c.clientIdHint}, ${environment}) on ${dateTime(c.setAt)}` : "Not entered: PayPal payouts go in each run's file"}
            {c.failure && <span class="bad">{` PayPal refused them on ${dateTime(c.failedAt)}: ${c.failure}`}</span>}
          </dd>
        </dl>
      </section>

      <section aria-labelledby="paypal-setup">
        <h2 id="paypal-setup">Send payouts through PayPal</h2>
        {!writable && <p class="muted">Read-only: your role ({program.role}) cannot change the credentials; an owner, admin or billing member can.</p>}
        <ol class="steps">
          <li>
            <h3>Create an app in PayPal</h3>
            <p>
              In the PayPal developer dashboard, open Apps &amp; Credentials, choose Sandbox to try it or Live for real payouts, and create an app (or open yours). Payouts must be enabled
              among the app's features; the PayPal account must be allowed to make payouts.
            </p>
          </li>
          <li>
            <h3>Enter the app's client id and secret</h3>
            <p>PayPal checks them before they are saved. The secret is never shown again.</p>
            {writable && (
              <form key={round} class="controls" aria-label="PayPal credentials" onSubmit={save}>
                <Field label="Client id" name="clientId" autocomplete="off" spellcheck={false} required />
                <Field label="Secret" name="clientSecret" type="password" autocomplete="off" required />
                <SelectField
                  label="Environment"
                  name="mode"
                  options={MODES}
                  value={mode ?? c.mode ?? "sandbox"}
                  onChange={(event) => setMode((event.currentTarget as HTMLSelectElement).value)}
                />
                <div>
                  <button type="submit" disabled={busy}>
                    Save PayPal credentials
                  </button>
                </div>
              </form>
            )}
          </li>
        </ol>
        {writable &&
          c.configured &&
          (confirming ? (
            <div class="confirm" role="group" aria-label="Remove the PayPal credentials?">
              <p>Remove them? The next runs put their PayPal payouts in the run's file again; a batch already sent is PayPal's to finish.</p>
              <span class="actions">
                <button type="button" class="secondary" ref={cancel} onClick={stopConfirming}>
                  Cancel
                </button>
                <button type="button" onClick={remove}>
                  Yes, remove them
                </button>
              </span>
            </div>
          ) : (
            <button type="button" class="secondary" ref={removeButton} onClick={() => setConfirming(true)}>
              Remove PayPal credentials
            </button>
          ))}
        {error && <Alert>{error}</Alert>}
        <StatusLine text={said} />
      </section>
    </>
  );
}
