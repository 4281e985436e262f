/**
 * The program's partner email settings (GET/PUT /api/programs/:programId/partner-email-settings): the reply-to
 * address, how often partners hear of new commissions, and the monthly summary. Saving needs programs:write; a
 * refused value is shown beside its field. Others read the settings in words.
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorMessage, invalidField } from "../../lib/api";
import { Alert, Field, StatusLine, useAsync } from "../../lib/ui";
import { useConsole } from "../session";
import { FREQUENCIES, type CommissionEmails, type EmailSettings } from "./model";

interface Draft {
  replyTo: string;
  commissionEmails: CommissionEmails;
  monthlySummary: boolean;
}

const draftOf = (s: EmailSettings): Draft => ({ replyTo: s.replyTo ?? "", commissionEmails: s.commissionEmails, monthlySummary: s.monthlySummary });

/** The reply-to rule in words (the API's is zod's "Invalid email address"). */
const REPLY_TO_RULE = "Enter one email address, such as partners@yourshop.example, or leave it empty.";

export function EmailSettingsForm() {
  const { program, programPath, can } = useConsole();
  const writable = can("programs:write");
  const saved = useAsync(() => api<EmailSettings>("GET", programPath("/partner-email-settings")), [program.id]);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [said, setSaid] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (saved.data) setDraft(draftOf(saved.data));
  }, [saved.data]);

  const edit = (change: Partial<Draft>) => {
    if (draft) setDraft({ ...draft, ...change });
    setSaid("");
  };

  const save = async (event: Event) => {
    event.preventDefault();
    if (!draft) return;
    setBusy(true);
    setError(null);
    setFieldErrors({});
    setSaid("");
    try {
      const s = await api<EmailSettings>("PUT", programPath("/partner-email-settings"), {
        replyTo: draft.replyTo.trim() || null,
        commissionEmails: draft.commissionEmails,
        monthlySummary: draft.monthlySummary,
      });
      setDraft(draftOf(s));
      setSaid("Email settings saved.");
    } catch (e) {
      const invalid = invalidField(e);
      if (invalid?.field === "replyTo") {
        setFieldErrors({ replyTo: REPLY_TO_RULE });
        document.getElementById("email-reply-to")?.focus();
      } else setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const s = saved.data;
  return (
    <section aria-labelledby="email-settings-title">
      <h2 id="email-settings-title">Settings</h2>
      <p>
        Partners get an email when their application is received, approved or declined, about new commissions (as often as you choose below), when a refund reduces or reverses a commission,
        when a payout is sent or fails, and a monthly summary. Each email has a one-click link to stop that kind of email (a failed payout is always told).
      </p>
      {saved.error && <Alert>{saved.error}</Alert>}
      {!s && !saved.error && <p class="muted">Loading…</p>}
      {s && !writable && (
        <>
          <dl class="facts">
            <dt>Reply-to</dt>
            <dd>{s.replyTo ?? "None: replies go to the sending address"}</dd>
            <dt>New commissions</dt>
            <dd>{FREQUENCIES.find(([value]) => value === s.commissionEmails)?.[1] ?? s.commissionEmails}</dd>
            <dt>Monthly summary</dt>
            <dd>{s.monthlySummary ? "Sent on the first day of each month" : "Not sent"}</dd>
          </dl>
          <p class="muted">Read-only: your role ({program.role}) cannot change them; an owner or admin can.</p>
        </>
      )}
      {s && draft && writable && (
        <form class="email-settings" aria-labelledby="email-settings-title" onSubmit={save} noValidate>
          <Field
            label="Reply-to address (optional)"
            id="email-reply-to"
            type="email"
            autocomplete="email"
            maxLength={320}
            placeholder="partners@yourshop.example"
            hint="Where partners' replies go. Empty: they go to the address the emails are sent from."
            error={fieldErrors.replyTo}
            value={draft.replyTo}
            onInput={(e) => edit({ replyTo: (e.currentTarget as HTMLInputElement).value })}
          />
          <fieldset>
            <legend>Emails about new commissions</legend>
            {FREQUENCIES.map(([value, label, hint]) => (
              <div key={value} class="choice">
                <input
                  type="radio"
                  id={`commission-emails-${value}`}
                  name="commissionEmails"
                  value={value}
                  checked={draft.commissionEmails === value}
                  aria-describedby={`commission-emails-${value}-hint`}
                  onChange={() => edit({ commissionEmails: value })}
                />
                <div>
                  <label for={`commission-emails-${value}`}>{label}</label>
                  <p class="hint muted" id={`commission-emails-${value}-hint`}>
                    {hint}
                  </p>
                </div>
              </div>
            ))}
          </fieldset>
          <div class="choice">
            <input
              type="checkbox"
              id="monthly-summary"
              checked={draft.monthlySummary}
              aria-describedby="monthly-summary-hint"
              onChange={(e) => edit({ monthlySummary: (e.currentTarget as HTMLInputElement).checked })}
            />
            <div>
              <label for="monthly-summary">Monthly summary</label>
              <p class="hint muted" id="monthly-summary-hint">
                On the first day of each month: what each partner earned, lost to refunds and was paid the month before.
              </p>
            </div>
          </div>
          <p>
            <button type="submit" disabled={busy}>
              Save email settings
            </button>
          </p>
        </form>
      )}
      {error && <Alert>{error}</Alert>}
      <StatusLine text={said} />
    </section>
  );
}
