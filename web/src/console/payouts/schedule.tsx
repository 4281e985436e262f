/**
 * The payout schedule (GET/PUT /api/programs/:programId/payout-schedule): runs start by hand only, on a day of each
 * month (1-28) or on a weekday of each week, in UTC; the next run's time is shown. Saving needs payouts:write; others
 * read the schedule in words.
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { dateTime } from "../../lib/format";
import { Alert, Field, SelectField, StatusLine, useAsync } from "../../lib/ui";
import { useConsole } from "../session";
import { WEEKDAYS, type PayoutSchedule } from "./model";

const KINDS: Array<[PayoutSchedule["kind"], string, string]> = [
  ["manual", "By hand", "A run starts only when someone starts one (here, with the API or the CLI)."],
  ["monthly", "Monthly", "On a day of each month; the run is named by the month (2026-11)."],
  ["weekly", "Weekly", "On a day of each week; the run is named by the ISO week (2026-W48)."],
];

/** The schedule in words: "On day 1 of each month (UTC)". */
export function scheduleText(s: PayoutSchedule): string {
  if (s.kind === "monthly") return `On day ${s.dayOfMonth ?? 1} of each month (UTC).`;
  if (s.kind === "weekly") return `Every ${WEEKDAYS[s.weekday ?? 1]} (UTC).`;
  return "By hand: no run starts by itself.";
}

export function ScheduleForm() {
  const { program, programPath, can } = useConsole();
  const writable = can("payouts:write");
  const [round, setRound] = useState(0);
  const saved = useAsync(() => api<PayoutSchedule>("GET", programPath("/payout-schedule")), [program.id, round]);
  const [draft, setDraft] = useState<{ kind: PayoutSchedule["kind"]; dayOfMonth: string; weekday: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [said, setSaid] = useState("");
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const s = saved.data;
    if (s) setDraft({ kind: s.kind, dayOfMonth: String(s.dayOfMonth ?? 1), weekday: String(s.weekday ?? 1) });
  }, [saved.data]);

  const save = async (event: Event) => {
    event.preventDefault();
    if (!draft) return;
    const body =
      draft.kind === "monthly"
        ? { kind: "monthly", dayOfMonth: Number(draft.dayOfMonth) }
        : draft.kind === "weekly"
          ? { kind: "weekly", weekday: Number(draft.weekday) }
          : { kind: "manual" };
    setBusy(true);
    setError(null);
    setSaid("");
    try {
      const s = await api<PayoutSchedule>("PUT", programPath("/payout-schedule"), body);
      setSaid(`Schedule saved. ${scheduleText(s)}${s.nextRunAt ? ` Next run: ${dateTime(s.nextRunAt)}.` : ""}`);
      setRound((n) => n + 1);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const s = saved.data;
  return (
    <section aria-labelledby="schedule-title">
      <h2 id="schedule-title">Schedule</h2>
      {saved.error && <Alert>{saved.error}</Alert>}
      {!s && !saved.error && <p class="muted">Loading…</p>}
      {s && (
        <p id="schedule-now">
          {scheduleText(s)} {s.nextRunAt ? <strong>{`Next run: ${dateTime(s.nextRunAt)}.`}</strong> : null}
        </p>
      )}
      {s && draft && writable && (
        <form class="schedule" aria-labelledby="schedule-title" onSubmit={save}>
          <fieldset>
            <legend>When runs start</legend>
            {KINDS.map(([kind, label, hint]) => (
              <div key={kind} class="choice">
                <input
                  type="radio"
                  id={`schedule-${kind}`}
                  name="kind"
                  value={kind}
                  checked={draft.kind === kind}
                  aria-describedby={`schedule-${kind}-hint`}
                  onChange={() => setDraft({ ...draft, kind })}
                />
                <div>
                  <label for={`schedule-${kind}`}>{label}</label>
                  <p class="hint muted" id={`schedule-${kind}-hint`}>
                    {hint}
                  </p>
                </div>
              </div>
            ))}
          </fieldset>
          {draft.kind === "monthly" && (
            <div class="indent-field">
              <Field
                label="Day of the month (1–28)"
                id="schedule-day"
                type="number"
                min={1}
                max={28}
                required
                value={draft.dayOfMonth}
                onInput={(e) => setDraft({ ...draft, dayOfMonth: (e.currentTarget as HTMLInputElement).value })}
              />
            </div>
          )}
          {draft.kind === "weekly" && (
            <div class="indent-field">
              <SelectField
                label="Day of the week"
                id="schedule-weekday"
                value={draft.weekday}
                onChange={(e) => setDraft({ ...draft, weekday: (e.currentTarget as HTMLSelectElement).value })}
                options={WEEKDAYS.map((name, i) => [String(i), name])}
              />
            </div>
          )}
          <p>
            <button type="submit" disabled={busy}>
              Save schedule
            </button>
          </p>
        </form>
      )}
      {s && !writable && <p class="muted">Read-only: your role ({program.role}) cannot change the schedule; an owner, admin or billing member can.</p>}
      {error && <Alert>{error}</Alert>}
      <StatusLine text={said} />
    </section>
  );
}
