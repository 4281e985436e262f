/** The workspace's notifications (partner notices and advertiser warnings), newest first, each marked read one by one. */
import { useState } from "preact/hooks";
import { api, errorMessage, type Page } from "../../lib/api";
import { day, money } from "../../lib/format";
import { Alert, useAsync } from "../../lib/ui";
import { useConsole } from "../session";
import { useFocusAfter } from "./focus";

interface Notification {
  id: number;
  kind: "partner_notice" | "advertiser_warning";
  partnerId: number;
  commissionId: number;
  transactionId: string;
  status: string;
  deductionCents: number;
  currency: string;
  reason: string;
  readAt: string | null;
  createdAt: string;
}

interface Unread {
  partner_notice: number;
  advertiser_warning: number;
  total: number;
}

function sentence(n: Notification): string {
  return n.kind === "advertiser_warning"
    ? `Manual review: ${n.reason} on ${n.transactionId} after partner ${n.partnerId} was paid; ${money(n.deductionCents, n.currency)} to recover.`
    : `Partner ${n.partnerId}: commission ${n.commissionId} ${n.status} (${n.reason}), ${money(n.deductionCents, n.currency)} deducted.`;
}

export function Inbox({ say, reloadKey }: { say: (text: string) => void; reloadKey: unknown }) {
  const { program } = useConsole();
  const path = `/api/workspaces/${program.workspaceId}/notifications`;
  const inbox = useAsync(() => api<Page<Notification> & { unread: Unread }>("GET", `${path}?limit=20`), [path, reloadKey]);
  const [error, setError] = useState<string | null>(null);
  const focusLater = useFocusAfter(inbox.data);

  const markRead = async (n: Notification) => {
    setError(null);
    try {
      await api("POST", `${path}/${n.id}/read`);
      say(`Notification ${n.id} marked read.`);
      focusLater(() => document.getElementById("inbox-title"));
      inbox.reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const u = inbox.data?.unread;
  const items = inbox.data?.data;
  return (
    <section aria-labelledby="inbox-title">
      <h2 id="inbox-title" tabIndex={-1}>
        Notifications{" "}
        {u && (
          <span class="muted" id="unread">
            ({u.total} unread: {u.advertiser_warning} warning(s), {u.partner_notice} partner notice(s))
          </span>
        )}
      </h2>
      {inbox.error && <Alert>{inbox.error}</Alert>}
      {error && <Alert>{error}</Alert>}
      {!items && !inbox.error && <p class="muted">Loading…</p>}
      {items && items.length > 0 && (
        <ul id="inbox" class="rows" aria-busy={inbox.loading}>
          {items.map((n) => {
            const warning = n.kind === "advertiser_warning";
            return (
              <li key={n.id} data-notification={n.id} class={n.readAt ? undefined : "unread"}>
                <span>
                  <span class={`badge ${warning ? "bad" : "muted"}`}>{warning ? "Warning" : "Notice"}</span> {sentence(n)} <span class="muted">{day(n.createdAt)}</span>
                </span>
                {!n.readAt && (
                  <span class="actions">
                    <button type="button" class="secondary" onClick={() => markRead(n)} aria-label={`Mark notification ${n.id} read`}>
                      Mark read
                    </button>
                  </span>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {items && items.length === 0 && (
        <p id="inbox-empty" class="muted">
          Nothing here yet.
        </p>
      )}
    </section>
  );
}
