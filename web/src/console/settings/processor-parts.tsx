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
  outcome: string | null;
  lastError: string | null;
}

export function lastEventText(e: LastEvent | null): string {
  return e ? `${e.type} (${e.id}) received ${dateTime(e.receivedAt)}: ${e.outcome ?? e.status}${e.lastError ? ` (${e.lastError})` : ""}` : "None received yet";
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
