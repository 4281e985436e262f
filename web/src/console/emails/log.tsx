/**
 * The program's email log (GET /api/programs/:programId/partner-emails): every email to its partners, newest first,
 * filtered by state and kind, "Load more" page after page. Each row says when, to whom, what, the subject (its text
 * behind a disclosure) and the state in words; a failed email is sent again with "Send again" (programs:write).
 */
import { useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { dateTime } from "../../lib/format";
import { Alert, FilterForm, LoadMore, SelectField, StatusLine, Table, useMoreRows, type Column } from "../../lib/ui";
import { partnerHref, useConsole } from "../session";
import { KIND_TEXT, stateText, STATUS_TEXT, type PartnerEmail } from "./model";

export function EmailLog() {
  const { program, programPath, can } = useConsole();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [round, setRound] = useState(0);
  const [said, setSaid] = useState("");
  const [error, setError] = useState<string | null>(null);
  const emails = useMoreRows<PartnerEmail>(programPath("/partner-emails"), filters, round);

  const sendAgain = async (e: PartnerEmail) => {
    setError(null);
    setSaid("");
    try {
      const answer = await api<{ retried: boolean; email: PartnerEmail }>("POST", programPath(`/partner-emails/${e.id}/retry`));
      emails.replace((row) => row.id === e.id, answer.email);
      setSaid(
        answer.retried
          ? `Email #${e.id} to ${e.recipient ?? "the partner"} is queued to be sent again. Refresh to see it sent.`
          : `Email #${e.id} is ${stateText(answer.email).toLowerCase()}: nothing to send again.`,
      );
      // The row's button is gone: the focus goes to the status's heading rather than the page's start.
      requestAnimationFrame(() => document.getElementById("email-log-title")?.focus());
    } catch (err) {
      setError(errorMessage(err));
    }
  };

  const columns: Array<Column<PartnerEmail>> = [
    { header: "When", cell: (e) => dateTime(e.createdAt) },
    {
      header: "To",
      cell: (e) => (
        <>
          <a href={partnerHref(e.partnerId, program.id)}>Partner #{e.partnerId}</a>
          <br />
          <span class="terms">{e.recipient ?? "No email address"}</span>
        </>
      ),
    },
    { header: "What", cell: (e) => KIND_TEXT[e.kind] ?? e.kind },
    {
      header: "Subject",
      cell: (e) => (
        <details class="email-text">
          <summary>{e.subject}</summary>
          <p class="pre-line">{e.text}</p>
        </details>
      ),
    },
    { header: "State", cell: (e) => <span class={`email-state ${e.status === "failed" ? "bad" : e.status === "sent" ? "ok" : ""}`}>{stateText(e)}</span> },
  ];
  if (can("programs:write"))
    columns.push({
      header: "Action",
      cell: (e) =>
        e.status === "failed" ? (
          <button
            type="button"
            class="secondary"
            onClick={() => void sendAgain(e)}
            aria-label={`Send email #${e.id} again (${KIND_TEXT[e.kind] ?? e.kind} to ${e.recipient ?? "the partner"})`}
          >
            Send again
          </button>
        ) : null,
    });

  return (
    <section aria-labelledby="email-log-title">
      <h2 id="email-log-title" tabIndex={-1} class="focus-target">
        Email log
      </h2>
      <FilterForm label="Filter emails" onApply={setFilters}>
        <SelectField label="State" name="status" options={[["", "Every state"], ...Object.entries(STATUS_TEXT)]} />
        <SelectField label="What" name="kind" options={[["", "Every kind"], ...Object.entries(KIND_TEXT)]} />
      </FilterForm>
      <p class="actions">
        <button type="button" class="secondary" onClick={() => setRound((n) => n + 1)}>
          Refresh
        </button>
      </p>
      <StatusLine text={said} />
      {error && <Alert>{error}</Alert>}
      {emails.error && <Alert>{emails.error}</Alert>}
      <Table caption="Emails to partners, newest first" columns={columns} rows={emails.rows} rowKey={(e) => e.id} loading={emails.loading} />
      {!emails.loading && !emails.error && emails.rows.length === 0 && <p class="muted">No email matches these filters.</p>}
      <LoadMore rows={emails} noun="email" afterId="email-log-title" />
    </section>
  );
}
