/**
 * Settings, Webhooks: the workspace's endpoints (docs/dashboard-api.md, "Webhook endpoints"). Add one with a URL
 * and the event types it takes (its signing secret is shown once); per endpoint: disable or enable it, rotate its
 * secret (the new one shown once, the old one still signing for 24 hours), send a test event, and read its delivery
 * log page by page, retrying a failed delivery by hand. Endpoints belong to the workspace, not to one program.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { dateTime } from "../../lib/format";
import { Alert, CopyButton, Field, PagedTable, StatusLine, useAsync, type Column } from "../../lib/ui";
import { useConsole } from "../session";

/**
 * The event types an endpoint may take, in the API's order of the docs, with when each is sent (shared/events.ts,
 * WEBHOOK_EVENT_TYPES and WEBHOOK_EVENTS: copied, as that module brings zod into the bundle; the browser test checks
 * the two lists are the same).
 */
export const EVENT_TYPES: Array<[type: string, when: string]> = [
  ["application.created", "An application arrived from the public form (pending, or approved at once)."],
  ["application.decided", "A pending application was approved or declined."],
  ["partner.enrolled", "A partner's enrollment became approved."],
  ["partner.banned", "A partner was banned: their links stopped and their uncredited commissions were voided."],
  ["lead.created", "A lead (signup) was recorded."],
  ["sale.created", "A sale was recorded."],
  ["commission.created", "A sale earned a commission (pending until its hold passes)."],
  ["commission.held", "A conversion the fraud rules flagged: its commission is held for review."],
  ["fraud.flagged", "The fraud rules flagged a conversion: the rules that fired and their evidence."],
  ["commission.credited", "A commission's hold passed: it was added to the partner's balance."],
  ["commission.refunded", "A partial refund or chargeback reduced a commission."],
  ["commission.reversed", "A full refund, a chargeback or a void made a commission worth nothing."],
  ["commission.paid", "A paid withdrawal paid a commission out."],
  ["withdrawal.created", "A withdrawal of a partner's balance was opened."],
  ["withdrawal.paid", "A withdrawal was paid."],
  ["withdrawal.failed", "A payout failed or was returned: its amount is back in the partner's balance."],
  ["reward.earned", "A reward was paid as account credit: credit the amount to your user."],
];

interface Endpoint {
  id: number;
  workspaceId: number;
  url: string;
  description: string | null;
  eventTypes: string[];
  enabled: boolean;
  consecutiveFailures: number;
  disabledAt: string | null;
  disabledReason: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Delivery {
  id: number;
  endpointId: number;
  eventType: string;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  retriedAt: string | null;
  createdAt: string;
}

const DELIVERY_STATUS: Record<Delivery["status"], string> = { pending: "Pending", succeeded: "Delivered", failed: "Failed" };

/** How long the delivery log refreshes itself after a test event or a retry (every 1.5 s). */
const WATCH_MS = 20_000;

export function Webhooks() {
  const { program, can } = useConsole();
  const writable = can("programs:write");
  const base = `/api/workspaces/${program.workspaceId}/webhook-endpoints`;
  const [round, setRound] = useState(0);
  const endpoints = useAsync(() => api<Endpoint[]>("GET", base), [base, round]);
  const [created, setCreated] = useState<(Endpoint & { secret: string }) | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const shown = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (created) shown.current?.focus();
  }, [created]);

  const add = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const eventTypes = data.getAll("eventTypes").map(String);
    setError(null);
    if (eventTypes.length === 0) return setError("Choose at least one event type.");
    setBusy(true);
    try {
      const endpoint = await api<Endpoint & { secret: string }>("POST", base, {
        url: String(data.get("url") ?? "").trim(),
        description: String(data.get("description") ?? "").trim() || null,
        eventTypes,
      });
      setCreated(endpoint);
      form.reset();
      setRound((n) => n + 1);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <section aria-labelledby="webhooks-title">
        <h2 id="webhooks-title">Webhook endpoints</h2>
        <p>
          Events of every program of this workspace are posted to your endpoints, each signed with the endpoint's secret in the Svc-Signature header (see the API reference's webhooks at{" "}
          <a href="/api/docs">/api/docs</a>).
        </p>
        {writable ? (
          <form onSubmit={add} aria-labelledby="add-endpoint-title">
            <h3 id="add-endpoint-title">Add an endpoint</h3>
            <div class="fields">
              <Field label="Endpoint URL" name="url" type="url" required maxLength={2000} placeholder="https://shop.example/hooks/affiliates" />
              <Field label="Description (optional)" name="description" maxLength={500} placeholder="Production" />
            </div>
            <fieldset>
              <legend>Events to send</legend>
              <div class="event-types">
                {EVENT_TYPES.map(([type, when]) => (
                  <div class="choice" key={type}>
                    <input type="checkbox" id={`event-${type}`} name="eventTypes" value={type} defaultChecked aria-describedby={`event-${type}-when`} />
                    <div>
                      <label for={`event-${type}`}>{type}</label>
                      <p id={`event-${type}-when`} class="hint muted">
                        {when}
                      </p>
                    </div>
                  </div>
                ))}
              </div>
            </fieldset>
            <p>
              <button type="submit" disabled={busy}>
                Add endpoint
              </button>
            </p>
            {error && <Alert>{error}</Alert>}
          </form>
        ) : (
          <p class="muted">Read-only: your role ({program.role}) cannot add or change endpoints; an owner or admin can.</p>
        )}
        {created && (
          <div class="secret-box">
            <h3 id="new-secret-title" ref={shown} tabIndex={-1}>
              Signing secret of <span class="terms">{created.url}</span>
            </h3>
            <p class="copy-row">
              <code class="secret" id="new-endpoint-secret">
                {created.secret}
              </code>
              <CopyButton text={created.secret} label="Copy secret" />
            </p>
            <p class="warn">
              <strong>Copy it now: it won't be shown again.</strong> Verify each delivery's Svc-Signature header with it; rotate it below if it leaks.
            </p>
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              I have copied it
            </button>
          </div>
        )}
      </section>

      <section aria-labelledby="endpoints-title">
        <h2 id="endpoints-title">Endpoints of this workspace</h2>
        {endpoints.error && <Alert>{endpoints.error}</Alert>}
        {endpoints.data && endpoints.data.length === 0 && <p class="muted">No endpoint yet.</p>}
        <div class="endpoints">
          {endpoints.data?.map((e) => (
            <EndpointCard key={e.id} endpoint={e} base={`${base}/${e.id}`} writable={writable} changed={() => setRound((n) => n + 1)} />
          ))}
        </div>
      </section>
    </>
  );
}

function EndpointCard({ endpoint, base, writable, changed }: { endpoint: Endpoint; base: string; writable: boolean; changed: () => void }) {
  const [said, setSaid] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ secret: string; previousUntil: string | null } | null>(null);
  const [logOpen, setLogOpen] = useState(false);
  const [logRound, setLogRound] = useState(0);
  const [watchUntil, setWatchUntil] = useState(0);
  const secretHeading = useRef<HTMLHeadingElement>(null);
  const titleId = `endpoint-${endpoint.id}`;
  const logId = `endpoint-${endpoint.id}-log`;

  // After a test event or a retry, the log refreshes itself for a while, so its outcome shows without a click.
  useEffect(() => {
    if (!watchUntil) return;
    const timer = setInterval(() => {
      if (Date.now() > watchUntil) setWatchUntil(0);
      else setLogRound((n) => n + 1);
    }, 1500);
    return () => clearInterval(timer);
  }, [watchUntil]);
  useEffect(() => {
    if (secret) secretHeading.current?.focus();
  }, [secret]);

  const act = async (work: () => Promise<string>) => {
    setError(null);
    setSaid("");
    try {
      setSaid(await work());
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const watch = () => {
    setLogOpen(true);
    setLogRound((n) => n + 1);
    setWatchUntil(Date.now() + WATCH_MS);
  };

  const sendTest = () =>
    act(async () => {
      const delivery = await api<Delivery>("POST", `${base}/test`);
      watch();
      return `Test event queued (delivery #${delivery.id}): its outcome shows in the delivery log.`;
    });
  const toggle = () =>
    act(async () => {
      await api("POST", `${base}/${endpoint.enabled ? "disable" : "enable"}`);
      changed();
      return endpoint.enabled ? "Endpoint disabled: nothing is sent to it until you enable it; its pending deliveries wait." : "Endpoint enabled: deliveries resume.";
    });
  const rotate = () =>
    act(async () => {
      const rotated = await api<Endpoint & { secret: string }>("POST", `${base}/rotate-secret`);
      setSecret({ secret: rotated.secret, previousUntil: rotated.previousSecretExpiresAt });
      changed();
      return "Secret rotated.";
    });
  const retry = (d: Delivery) =>
    act(async () => {
      const answer = await api<{ retried: boolean; delivery: Delivery }>("POST", `${base}/deliveries/${d.id}/retry`);
      watch();
      return answer.retried ? `Delivery #${d.id} is sent again.` : `Delivery #${d.id} is ${DELIVERY_STATUS[answer.delivery.status].toLowerCase()} already: nothing to retry.`;
    });

  const columns: Array<Column<Delivery>> = [
    {
      header: "Event",
      cell: (d) => (
        <>
          <code>{d.eventType}</code> <span class="muted">#{d.id}</span>
        </>
      ),
    },
    {
      header: "Status",
      cell: (d) => (
        <span class={d.status === "failed" ? "bad" : d.status === "succeeded" ? "ok" : undefined}>
          {DELIVERY_STATUS[d.status]}
          {d.status === "pending" && d.attempts > 0 && d.nextAttemptAt ? ` (next try ${dateTime(d.nextAttemptAt)})` : ""}
        </span>
      ),
    },
    { header: "Attempts", numeric: true, cell: (d) => d.attempts },
    { header: "Response code", cell: (d) => (d.lastStatusCode !== null ? d.lastStatusCode : (d.lastError ?? "—")) },
    { header: "Time", cell: (d) => dateTime(d.deliveredAt ?? d.createdAt) },
  ];
  if (writable)
    columns.push({
      header: "Action",
      cell: (d) =>
        d.status === "failed" ? (
          <button type="button" class="secondary" onClick={() => retry(d)} aria-label={`Retry delivery #${d.id} (${d.eventType})`}>
            Retry
          </button>
        ) : null,
    });

  return (
    <article class="endpoint" aria-labelledby={titleId} data-endpoint={endpoint.id}>
      <h3 id={titleId} class="terms">
        {endpoint.url}
      </h3>
      {endpoint.description && <p class="muted">{endpoint.description}</p>}
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          {endpoint.enabled ? (
            <span class="ok">Enabled</span>
          ) : (
            <span class="warn">
              Disabled {dateTime(endpoint.disabledAt)}
              {endpoint.disabledReason ? `: ${endpoint.disabledReason}` : ""}
            </span>
          )}
          {endpoint.consecutiveFailures > 0 && ` · ${endpoint.consecutiveFailures} failed deliveries in a row`}
        </dd>
        <dt>Events</dt>
        <dd class="terms">{endpoint.eventTypes.join(", ")}</dd>
        {endpoint.previousSecretExpiresAt && Date.parse(endpoint.previousSecretExpiresAt) > Date.now() && (
          <>
            <dt>Previous secret</dt>
            <dd>Still signs deliveries until {dateTime(endpoint.previousSecretExpiresAt)}</dd>
          </>
        )}
      </dl>
      {writable && (
        <p class="actions wrap">
          {endpoint.enabled && (
            <button type="button" onClick={sendTest}>
              Send test event
            </button>
          )}
          <button type="button" class="secondary" onClick={toggle}>
            {endpoint.enabled ? "Disable" : "Enable"}
          </button>
          <button type="button" class="secondary" onClick={rotate}>
            Rotate secret
          </button>
        </p>
      )}
      {writable && !endpoint.enabled && <p class="muted">Enable it to send a test event or retry a delivery.</p>}
      {secret && (
        <div class="secret-box">
          <h4 ref={secretHeading} tabIndex={-1}>
            New signing secret
          </h4>
          <p class="copy-row">
            <code class="secret">{secret.secret}</code>
            <CopyButton text={secret.secret} label="Copy new secret" />
          </p>
          <p class="warn">
            <strong>Copy it now: it won't be shown again.</strong> Every delivery is signed with it from now on. The old secret keeps working for 24 hours
            {secret.previousUntil ? ` (until ${dateTime(secret.previousUntil)})` : ""}: deploy the new one to your receiver before then.
          </p>
          <button type="button" class="secondary" onClick={() => setSecret(null)}>
            I have copied it
          </button>
        </div>
      )}
      {error && <Alert>{error}</Alert>}
      <StatusLine text={said} />
      <p class="actions wrap">
        <button type="button" class="secondary" aria-expanded={logOpen} aria-controls={logId} onClick={() => setLogOpen(!logOpen)}>
          {logOpen ? "Hide delivery log" : "Show delivery log"}
        </button>
        {logOpen && (
          <button type="button" class="secondary" onClick={() => setLogRound((n) => n + 1)}>
            Refresh log
          </button>
        )}
      </p>
      <div id={logId} hidden={!logOpen}>
        {logOpen && (
          <PagedTable<Delivery>
            caption={`Delivery log of ${endpoint.url}`}
            path={`${base}/deliveries`}
            filters={{}}
            reloadKey={logRound}
            rowKey={(d) => d.id}
            empty="Nothing sent to this endpoint yet."
            columns={columns}
          />
        )}
      </div>
    </article>
  );
}
