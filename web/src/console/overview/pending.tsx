/** Partners waiting for approval: the program's pending enrollments; someone with programs:write approves or declines. */
import { useState } from "preact/hooks";
import { api, errorMessage, type Page } from "../../lib/api";
import { day } from "../../lib/format";
import { Alert, useAsync } from "../../lib/ui";
import { partnerHref, useConsole } from "../session";
import { useFocusAfter } from "./focus";

interface PendingPartner {
  partnerId: number;
  name: string;
  email: string | null;
  referralCode: string;
  enrolledAt: string;
}

const nameOf = (p: PendingPartner): string => p.name || p.email || `Partner #${p.partnerId}`;

export function PendingPartners({ say, reloadKey }: { say: (text: string) => void; reloadKey: unknown }) {
  const { program, programPath, can } = useConsole();
  const list = useAsync(() => api<Page<PendingPartner>>("GET", programPath("/partners?status=pending&limit=100")), [program.id, reloadKey]);
  const [error, setError] = useState<string | null>(null);
  const focusLater = useFocusAfter(list.data);

  const decide = async (partner: PendingPartner, decision: "approve" | "decline") => {
    setError(null);
    try {
      const answer = await api<{ status: string }>("POST", programPath(`/partners/${partner.partnerId}/${decision}`));
      say(`${nameOf(partner)} ${answer.status}.`);
      // Keep the keyboard in the list: on the next partner's first button, else on the section's heading.
      focusLater(() => document.querySelector<HTMLElement>("#pending-list button") ?? document.getElementById("pending-title"));
      list.reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  const partners = list.data?.data;
  return (
    <section aria-labelledby="pending-title">
      <h2 id="pending-title" tabIndex={-1}>
        Partners waiting for approval
      </h2>
      {list.error && <Alert>{list.error}</Alert>}
      {error && <Alert>{error}</Alert>}
      {!partners && !list.error && <p class="muted">Loading…</p>}
      {partners && partners.length > 0 && (
        <ul id="pending-list" class="rows" aria-busy={list.loading}>
          {partners.map((p) => (
            <li key={p.partnerId} data-partner={p.partnerId}>
              <span>
                <a href={partnerHref(p.partnerId, program.id)}>
                  <strong>{nameOf(p)}</strong>
                </a>{" "}
                <span class="muted">
                  {p.email || "no email"} · code {p.referralCode} · applied {day(p.enrolledAt)}
                </span>
              </span>
              {can("programs:write") && (
                <span class="actions">
                  <button type="button" onClick={() => decide(p, "approve")} aria-label={`Approve ${nameOf(p)}`}>
                    Approve
                  </button>
                  <button type="button" class="secondary" onClick={() => decide(p, "decline")} aria-label={`Decline ${nameOf(p)}`}>
                    Decline
                  </button>
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      {partners && partners.length === 0 && (
        <p id="pending-empty" class="muted">
          No partner is waiting.
        </p>
      )}
    </section>
  );
}
