/**
 * Settings, Stripe: connecting the program's Stripe account, step by step (docs/processor-webhooks.md): the webhook
 * URL to paste and the events to select, the endpoint's signing secret and a restricted key to enter, the Connect
 * account for platforms, and what paying partners by Stripe transfer needs (docs/payouts.md); then the connection's
 * state and the last event received with its result.
 */
import { useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { dateTime } from "../../lib/format";
import { Alert, Field, useAsync } from "../../lib/ui";
import { useConsole } from "../session";
import { ConnectionFacts, EventList, SetupSteps, WebhookUrl, type LastEvent } from "./processor-parts";

interface Connection {
  webhookPath: string;
  platformWebhookPath?: string;
  requiredEvents: string[];
  optionalEvents: string[];
  payoutEvents: string[];
  connection: { status: string | null; accountId: string | null; chargesEnabled: boolean; payoutsEnabled: boolean; detailsSubmitted: boolean; connectedAt: string | null };
  signingSecret: { configured: boolean; hint: string | null; setAt: string | null };
  connectSigningSecret: { configured: boolean; hint: string | null; setAt: string | null };
  restrictedKey: { configured: boolean; keyHint: string | null; setAt: string | null; failedAt: string | null; failure: string | null };
  lastEvent: LastEvent | null;
}

export function StripeSettings() {
  const { program, programPath, can } = useConsole();
  const writable = can("programs:write");
  const [round, setRound] = useState(0);
  const [said, setSaid] = useState("");
  const [error, setError] = useState<string | null>(null);
  const state = useAsync(() => api<Connection>("GET", programPath("/processor")), [program.id, round]);

  /** Sends one form's field (with `extra`) to `path` with `method`; the state is read again after. */
  const save =
    (method: "PUT" | "DELETE", path: string, field: string | null, done: string, extra: Record<string, string> = {}) =>
    async (event: Event) => {
      event.preventDefault();
      const form = event.currentTarget as HTMLFormElement;
      setError(null);
      try {
        await api(method, programPath(path), field ? { [field]: String(new FormData(form).get(field) ?? "").trim(), ...extra } : undefined);
        form.reset();
        setSaid(done);
        setRound((n) => n + 1);
      } catch (e) {
        setError(errorMessage(e));
      }
    };

  if (state.error) return <Alert>{state.error}</Alert>;
  const c = state.data;
  if (!c) return <p class="muted">Loading…</p>;
  const webhookUrl = `${location.origin}${c.webhookPath}`;
  return (
    <>
      <ConnectionFacts id="stripe" title="Connection" lastEventLabel="Last event" lastEvent={c.lastEvent} onCheckAgain={() => setRound((n) => n + 1)}>
        <dt>Webhook signing secret</dt>
        <dd>{c.signingSecret.configured ? `Entered (${c.signingSecret.hint}) on ${dateTime(c.signingSecret.setAt)}` : "Not entered: step 2"}</dd>
        <dt>Connect signing secret</dt>
        <dd>
          {c.connectSigningSecret.configured ? `Entered (${c.connectSigningSecret.hint}) on ${dateTime(c.connectSigningSecret.setAt)}` : "Not entered: step 5 (to pay partners by Stripe)"}
        </dd>
        <dt>Restricted key</dt>
        <dd>
          {c.restrictedKey.configured ? `Entered (${c.restrictedKey.keyHint}) on ${dateTime(c.restrictedKey.setAt)}` : "Not entered: step 3 (optional)"}
          {c.restrictedKey.failure && <span class="bad">{` Stripe refused it on ${dateTime(c.restrictedKey.failedAt)}: ${c.restrictedKey.failure}`}</span>}
        </dd>
        <dt>Stripe account</dt>
        <dd>
          {c.connection.accountId
            ? `${c.connection.accountId}: ${c.connection.status ?? "unknown"}${c.connection.chargesEnabled ? ", charges enabled" : ""}${c.connection.connectedAt ? `, connected ${dateTime(c.connection.connectedAt)}` : ""}`
            : "No Connect account linked (only needed on a Connect platform)"}
        </dd>
      </ConnectionFacts>

      <SetupSteps id="stripe" platform="Stripe" writable={writable} role={program.role} error={error} said={said}>
        <li>
          <h3>Add a webhook endpoint in Stripe</h3>
          <p>In the Stripe Dashboard, open Developers → Webhooks → Add endpoint, and paste this URL:</p>
          <WebhookUrl id="stripe-webhook-url" url={webhookUrl} />
          <p>Select these events:</p>
          <EventList types={c.requiredEvents} />
          <details>
            <summary>Optional events (they only add links or repeat news)</summary>
            <EventList types={c.optionalEvents} />
          </details>
        </li>
        <li>
          <h3>Enter the endpoint's signing secret</h3>
          <p>Stripe shows it on the endpoint's page (Signing secret, starts with whsec_). Events are accepted only with a valid signature.</p>
          {writable && (
            <form class="controls" aria-label="Step 2: the signing secret" onSubmit={save("PUT", "/processor/webhook-secret", "signingSecret", "Signing secret saved.")}>
              <Field label="Signing secret" name="signingSecret" type="password" autocomplete="off" required pattern="whsec_.+" />
              <div>
                <button type="submit">Save signing secret</button>
              </div>
            </form>
          )}
        </li>
        <li>
          <h3>Enter a restricted key (for product rewards)</h3>
          <p>
            Create a restricted key in Stripe (Developers → API keys) with read access to Checkout Sessions, Invoices, Prices and Products, so rewards by product can read what was bought.
            Secret keys (sk_) are refused.
          </p>
          {writable && (
            <form class="controls" aria-label="Step 3: the restricted key" onSubmit={save("PUT", "/processor/api-key", "restrictedKey", "Restricted key saved: Stripe accepted it.")}>
              <Field label="Restricted key" name="restrictedKey" type="password" autocomplete="off" required pattern="rk_.+" />
              <div>
                <button type="submit">Save restricted key</button>
              </div>
            </form>
          )}
        </li>
        <li>
          <h3>On a Connect platform only: link the connected account</h3>
          <p>
            If your payments run on connected accounts of a Stripe Connect platform, the platform's endpoint (<code>{c.platformWebhookPath ?? "/api/v1/webhooks/processor"}</code>) receives
            the events instead; link the account here so its events count for this program.
          </p>
          {writable && (
            <form class="controls" aria-label="Step 4: the connected account" onSubmit={save("PUT", "/processor/account", "accountId", "Account linked: its events count for this program.")}>
              <Field label="Connected account id" name="accountId" required pattern="acct_.+" placeholder="acct_..." />
              <div>
                <button type="submit">Link account</button>
              </div>
            </form>
          )}
        </li>
        <li>
          <h3>To pay partners by Stripe transfer (optional)</h3>
          <p>
            Partners who choose Stripe connect an Express account under yours from the partner portal, and payout runs pay them by transfer from your Stripe balance. For that, give the
            restricted key of step 3 write access to Connect (Accounts, Account links, Transfers), and select these events too on the endpoint of step 1:
          </p>
          <EventList types={c.payoutEvents} />
          <p>
            Then add a second endpoint in Stripe with the same URL, listening to <strong>events on connected accounts</strong>, with the event <code>account.updated</code> (so a partner's
            account shows ready as soon as Stripe says so), and enter its signing secret here.
          </p>
          {writable && (
            <form
              class="controls"
              aria-label="Step 5: the Connect endpoint's signing secret"
              onSubmit={save("PUT", "/processor/webhook-secret", "signingSecret", "Connect signing secret saved.", { endpoint: "connect" })}
            >
              <Field label="Connect endpoint's signing secret" name="signingSecret" type="password" autocomplete="off" required pattern="whsec_.+" />
              <div>
                <button type="submit">Save Connect signing secret</button>
              </div>
            </form>
          )}
        </li>
      </SetupSteps>
    </>
  );
}
