/**
 * What the billing platforms' settings (Stripe, Paddle) show alike: the webhook URL to paste, the events to select,
 * and the last event received with its result.
 */
import { dateTime } from "../../lib/format";
import { CopyButton } from "../../lib/ui";

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
