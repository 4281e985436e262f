/**
 * Overview: a program's figures over a period (cards, two charts with the same numbers in words and in a table, the
 * partners of the period), then what waits for the merchant: partners to approve, balances to withdraw and pay, the
 * integration checklist (refreshed every 5 s) and the workspace's notifications. The program is the shell's choice.
 */
import { useEffect, useState } from "preact/hooks";
import { api, query } from "../../lib/api";
import { Alert, Field, StatusLine, useAsync } from "../../lib/ui";
import { Balances } from "../overview/balances";
import { IntegrationChecklist } from "../overview/checklist";
import { Charts, Figures, PeriodPartners, type ProgramOverview } from "../overview/figures";
import { BreakdownCharts, type Breakdowns } from "../../lib/breakdowns";
import { Inbox } from "../overview/inbox";
import { PendingPartners } from "../overview/pending";
import { Screen } from "../screen";
import { useConsole } from "../session";

interface Period {
  from: string;
  to: string;
  test: boolean;
}

export function Overview() {
  const { program, programPath, can } = useConsole();
  // What the form shows, and what was last asked for with "Show" (a new object each time, so Show always reloads).
  const [draft, setDraft] = useState<Period>({ from: "", to: "", test: false });
  const [period, setPeriod] = useState<Period>(draft);
  const [round, setRound] = useState(0);
  const [said, setSaid] = useState("");
  const overview = useAsync(
    () => api<ProgramOverview>("GET", programPath(`/overview${query({ from: period.from, to: period.to, test: period.test ? "true" : undefined })}`)),
    [program.id, period],
  );
  const breakdowns = useAsync(
    () => api<Breakdowns>("GET", programPath(`/breakdowns${query({ from: period.from, to: period.to, test: period.test ? "true" : undefined })}`)),
    [program.id, period],
  );
  // Empty days take the period the API chose (the last 30 days), so the form says what is shown.
  useEffect(() => {
    const o = overview.data;
    if (o) setDraft((d) => ({ ...d, from: d.from || o.from, to: d.to || o.to }));
  }, [overview.data]);

  const show = (event: Event) => {
    event.preventDefault();
    setPeriod({ ...draft });
    setRound((n) => n + 1);
  };
  const o = overview.data;
  return (
    <Screen title="Overview">
      <form class="card filters" aria-label="Period" onSubmit={show}>
        <div class="controls">
          <Field label="From (UTC day)" id="from" type="date" value={draft.from} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} />
          <Field label="To (UTC day)" id="to" type="date" value={draft.to} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} />
          <div class="check">
            <input id="test" type="checkbox" checked={draft.test} onChange={(e) => setDraft({ ...draft, test: e.currentTarget.checked })} />
            <label for="test">Test data only</label>
          </div>
          <div>
            <button type="submit">Show</button>
          </div>
        </div>
      </form>
      <div id="action-status">
        <StatusLine text={said} />
      </div>
      {overview.error && <Alert>{overview.error}</Alert>}
      {!o && !overview.error && <p class="muted">Loading…</p>}
      {o && (
        <div id="overview" aria-busy={overview.loading}>
          <Figures overview={o} />
          <Charts overview={o} />
          {breakdowns.data && <BreakdownCharts id="breakdowns" data={breakdowns.data} />}
          {breakdowns.error && <Alert>{breakdowns.error}</Alert>}
          <PeriodPartners overview={o} />
        </div>
      )}
      <PendingPartners say={setSaid} reloadKey={round} />
      <Balances say={setSaid} reloadKey={round} />
      {can("tracking:read") && <IntegrationChecklist />}
      <Inbox say={setSaid} reloadKey={round} />
    </Screen>
  );
}
