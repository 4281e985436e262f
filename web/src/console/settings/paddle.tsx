/**
 * Settings, Paddle (docs/processor-webhooks.md, "Paddle Billing"): connecting the program's Paddle Billing account,
 * step by step: the notification destination's URL and the events to select, its secret key and environment, an
 * optional read-only API key (the customer's email and the discount's code of a sale), and how the checkout passes
 * the referral click; then the connection's state and the last notification received with its result. Removing
 * the API key asks once more.
 */
import { useRef, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { dateTime } from "../../lib/format";
import { Alert, Confirm, CopyButton, Field, SelectField, useAsync } from "../../lib/ui";
import { useConsole } from "../session";
import { ConnectionFacts, EventList, SetupSteps, WebhookUrl, type LastEvent } from "./processor-parts";

interface PaddleConnection {
  webhookPath: string;
  requiredEvents: string[];
  environment: "sandbox" | "live";
  secretKey: { configured: boolean; hint: string | null; setAt: string | null };
  apiKey: { configured: boolean; keyHint: string | null; setAt: string | null; failedAt: string | null; failure: string | null };
  lastEvent: LastEvent | null;
}

const ENVIRONMENTS: Array<[string, string]> = [
  ["live", "Live (real sales)"],
  ["sandbox", "Sandbox (test sales)"],
];

const CHECKOUT_SNIPPET = `Paddle.Checkout.open({
  items: [{ priceId: "pri_...", quantity: 1 }],
  customData: { svc_click_id: svc.clickId(), svc_customer_key: currentUser.id },
});`;

export function PaddleSettings() {
  const { program, programPath, can } = useConsole();
  const writable = can("programs:write");
  const [round, setRound] = useState(0);
  const [said, setSaid] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const removeButton = useRef<HTMLButtonElement>(null);
  const state = useAsync(() => api<PaddleConnection>("GET", programPath("/processor/paddle")), [program.id, round]);

  /** Sends the change (the form's fields, or `change` itself); the state is read again after. */
  const send = async (change: Record<string, string | null>, done: string, form?: HTMLFormElement) => {
    setError(null);
    setSaid("");
    try {
      await api("PUT", programPath("/processor/paddle"), change);
      form?.reset();
      setConfirming(false);
      setSaid(done);
      setRound((n) => n + 1);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const submit = (fields: string[], done: string) => (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    void send(Object.fromEntries(fields.map((name) => [name, String(data.get(name) ?? "").trim()])), done, form);
  };

  if (state.error) return <Alert>{state.error}</Alert>;
  const c = state.data;
  if (!c) return <p class="muted">Loading…</p>;
  return (
    <>
      <ConnectionFacts id="paddle" title="Paddle connection" lastEventLabel="Last notification" lastEvent={c.lastEvent} onCheckAgain={() => setRound((n) => n + 1)}>
        <dt>Environment</dt>
        <dd id="paddle-environment">{c.environment === "sandbox" ? "Sandbox: sales are test sales, with no commission" : "Live"}</dd>
        <dt>Secret key</dt>
        <dd id="paddle-secret">
          {c.secretKey.configured ? `Entered (${c.secretKey.hint}) on ${dateTime(c.secretKey.setAt)}` : "Not entered: step 2 (every notification is refused until then)"}
        </dd>
        <dt>API key</dt>
        <dd id="paddle-api-key">
          {c.apiKey.configured ? `Entered (${c.apiKey.keyHint}) on ${dateTime(c.apiKey.setAt)}` : "Not entered: step 3 (optional)"}
          {c.apiKey.failure && <span class="bad">{` Paddle refused it on ${dateTime(c.apiKey.failedAt)}: ${c.apiKey.failure}`}</span>}
        </dd>
      </ConnectionFacts>

      <SetupSteps id="paddle" platform="Paddle" writable={writable} role={program.role} error={error} said={said}>
        <li>
          <h3>Add a notification destination in Paddle</h3>
          <p>In Paddle, open Developer tools → Notifications → New destination, choose the webhook type, and paste this URL:</p>
          <WebhookUrl id="paddle-webhook-url" url={`${location.origin}${c.webhookPath}`} />
          <p>Select these events:</p>
          <EventList types={c.requiredEvents} />
        </li>
        <li>
          <h3>Enter the destination's secret key</h3>
          <p>Paddle shows it on the destination (Secret key, starts with pdl_ntfset_). Notifications are accepted only with a valid signature.</p>
          {writable && (
            <form key={round} class="controls" aria-label="Step 2: the secret key" onSubmit={submit(["secretKey", "environment"], "Secret key saved.")}>
              <Field label="Secret key" name="secretKey" type="password" autocomplete="off" spellcheck={false} required />
              <SelectField label="Environment" name="environment" options={ENVIRONMENTS} value={c.environment} />
              <div>
                <button type="submit">Save secret key</button>
              </div>
            </form>
          )}
        </li>
        <li>
          <h3>Enter an API key (optional)</h3>
          <p>
            Paddle's notifications name the customer and the discount but not their email and code. With an API key that may read Customers and Discounts, a sale is also attributed by the
            email of a signup you tracked and by a partner's coupon code. Paddle checks the key before it is saved.
          </p>
          {writable && (
            <form class="controls" aria-label="Step 3: the API key" onSubmit={submit(["apiKey"], "API key saved: Paddle accepted it.")}>
              <Field label="API key" name="apiKey" type="password" autocomplete="off" spellcheck={false} required />
              <div>
                <button type="submit">Save API key</button>
              </div>
            </form>
          )}
          {writable &&
            c.apiKey.configured &&
            (confirming ? (
              <Confirm
                question="Remove the API key?"
                details="Sales are then attributed without the customer's email and the discount's code."
                confirmLabel="Yes, remove it"
                busy={false}
                onConfirm={() => void send({ apiKey: null }, "API key removed.")}
                onCancel={() => {
                  setConfirming(false);
                  requestAnimationFrame(() => removeButton.current?.focus());
                }}
              />
            ) : (
              <button type="button" class="secondary" ref={removeButton} onClick={() => setConfirming(true)}>
                Remove API key
              </button>
            ))}
        </li>
        <li>
          <h3>Pass the referral click to the checkout</h3>
          <p>With the tracking script on your pages, give Paddle.js the click id (and your user's id) as custom data when you open the checkout:</p>
          <pre class="code-block">
            <code>{CHECKOUT_SNIPPET}</code>
          </pre>
          <CopyButton text={CHECKOUT_SNIPPET} label="Copy code" />
        </li>
      </SetupSteps>
    </>
  );
}
