/**
 * What the billing platforms' settings (Stripe, Paddle) show alike: the connection's facts with the last event and a
 * "Check again", the numbered set-up steps (read-only for a role that cannot change them), the webhook URL to paste
 * and the events to select.
 */
import type { ComponentChildren } from "preact";
import { dateTime } from "../../lib/format";
import { Alert, CopyButton, StatusLine } from "../../lib/ui";

/** The last event a platform sent, as the connection's GET answers it. */
export interface LastEvent {
  id: string;
  type: string;
  status: string;
  receivedAt: string;
  /** What processing did; `reason` says why an event was ignored or rejected. */
  outcome: { reason?: unknown; attributionMethod?: unknown } | null;
  lastError: string | null;
}

/** e.g. "transaction.completed (paddle:1:evt_…) received 2026-01-02 09:00 UTC: processed, attributed by click". */
export function lastEventText(e: LastEvent | null): string {
  if (!e) return "None received yet";
  const reason = typeof e.outcome?.reason === "string" ? `: ${e.outcome.reason}` : "";
  const method = typeof e.outcome?.attributionMethod === "string" ? `, attributed by ${e.outcome.attributionMethod.replace(/_/g, " ")}` : "";
  return `${e.type} (${e.id}) received ${dateTime(e.receivedAt)}: ${e.status}${reason}${method}${e.lastError ? ` (${e.lastError})` : ""}`;
}

/** The URL to paste at the platform, with a copy button. */
export function WebhookUrl({ id, url }: { id: string; url: string }) {
  return (
    <p class="copy-row">
      <code class="secret" id={id}>
        {url}
      </code>
      <CopyButton text={url} label="Copy URL" />
    </p>
  );
}

/** Event types to select at the platform. */
export function EventList({ types }: { types: string[] }) {
  return (
    <ul class="events">
      {types.map((type) => (
        <li key={type}>
          <code>{type}</code>
        </li>
      ))}
    </ul>
  );
}

/** The connection's facts (`<dt>`/`<dd>` pairs), its last event, and a button that reads them again. */
export function ConnectionFacts(p: { id: string; title: string; lastEventLabel: string; lastEvent: LastEvent | null; onCheckAgain: () => void; children: ComponentChildren }) {
  return (
    <section aria-labelledby={`${p.id}-state`}>
      <h2 id={`${p.id}-state`}>{p.title}</h2>
      <dl class="facts">
        {p.children}
        <dt>{p.lastEventLabel}</dt>
        <dd id={`${p.id}-last-event`}>{lastEventText(p.lastEvent)}</dd>
      </dl>
      <button type="button" class="secondary" onClick={p.onCheckAgain}>
        Check again
      </button>
    </section>
  );
}

/** "Connect your <platform> account": the numbered steps (`<li>`s), then what the last action said or the error. */
export function SetupSteps(p: { id: string; platform: string; writable: boolean; role: string; error: string | null; said: string; children: ComponentChildren }) {
  return (
    <section aria-labelledby={`${p.id}-steps`}>
      <h2 id={`${p.id}-steps`}>Connect your {p.platform} account</h2>
      {!p.writable && <p class="muted">Read-only: your role ({p.role}) cannot change the connection; an owner or admin can.</p>}
      <ol class="steps">{p.children}</ol>
      {p.error && <Alert>{p.error}</Alert>}
      <StatusLine text={p.said} />
    </section>
  );
}
