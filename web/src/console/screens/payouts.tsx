/**
 * Payouts (docs/merchants.md, "Payouts"): the payout runs (preview a run, confirm and pay, the runs with their
 * totals), the schedule, and every payout of the program with filters and CSV. A run's own view is the same address
 * with ?run=ID (page routes carry no ids). Someone with payouts:write starts runs, marks payouts paid or failed and
 * sets the schedule.
 */
import { useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { api, errorMessage } from "../../lib/api";
import { dateTime, money } from "../../lib/format";
import { FilterForm, Field, PagedTable, SelectField, StatusLine, type Column } from "../../lib/ui";
import { methodText, PAYOUT_STATE_TEXT, runHref, type PayoutMethod, type PayoutState } from "../payouts/model";
import { RunDetailView } from "../payouts/run-detail";
import { Runs } from "../payouts/runs";
import { ScheduleForm } from "../payouts/schedule";
import { usePartnerFilter } from "../partner-filter";
import { Screen } from "../screen";
import { partnerHref, useConsole } from "../session";

export interface WithdrawalRow {
  id: number;
  partnerId: number;
  currency: string;
  amountCents: number;
  status: PayoutState;
  method?: PayoutMethod | null;
  runId?: number | null;
  failureReason?: string | null;
  createdAt: string;
  paidAt: string | null;
}

/** The payout columns, shared with the partner screen (which drops "Partner"). */
export function PayoutColumns(currency: string, programId?: number): Array<Column<WithdrawalRow>> {
  return [
    { header: "Requested", cell: (w) => dateTime(w.createdAt) },
    { header: "Partner", cell: (w) => (programId ? <a href={partnerHref(w.partnerId, programId)}>Partner #{w.partnerId}</a> : `#${w.partnerId}`) },
    { header: "Method", cell: (w) => methodText(w.method) },
    { header: "Amount", numeric: true, cell: (w) => money(w.amountCents, currency) },
    { header: "State", cell: (w) => (w.status === "failed" && w.failureReason ? `Failed: ${w.failureReason}` : (PAYOUT_STATE_TEXT[w.status] ?? w.status)) },
    { header: "Paid", cell: (w) => (w.paidAt ? dateTime(w.paidAt) : "—") },
    { header: "Run", cell: (w) => (!w.runId ? "—" : programId ? <a href={runHref(w.runId, programId)}>Run #{w.runId}</a> : `Run #${w.runId}`) },
  ];
}

export function Payouts() {
  const runId = Number(useLocation().query.run);
  const [said, setSaid] = useState("");
  if (Number.isInteger(runId) && runId > 0) return <RunDetailView runId={runId} said={said} say={setSaid} />;
  return (
    <Screen title="Payouts">
      <StatusLine text={said} />
      <Runs say={setSaid} />
      <ScheduleForm />
      <EveryPayout say={setSaid} />
    </Screen>
  );
}

/**
 * Every payout of the program (runs' and operators' withdrawals), filtered, paged, with CSV; Mark paid for one not sent
 * by Stripe. What it did is said in the screen's status line.
 */
function EveryPayout({ say }: { say: (text: string) => void }) {
  const { program, settings, programPath, can } = useConsole();
  const partner = usePartnerFilter();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [round, setRound] = useState(0);
  const apply = async ({ partner: text, ...rest }: Record<string, string>) => {
    await partner.resolve(text);
    setFilters(rest);
  };
  const markPaid = async (w: WithdrawalRow) => {
    try {
      await api("POST", programPath(`/withdrawals/${w.id}/pay`));
      say(`Payout #${w.id} of ${money(w.amountCents, settings.currency)} marked paid.`);
      setRound((n) => n + 1);
    } catch (e) {
      say(errorMessage(e));
    }
  };
  const columns = PayoutColumns(settings.currency, program.id);
  if (can("payouts:write"))
    columns.push({
      header: "Action",
      cell: (w) =>
        w.status === "open" || (w.status === "processing" && w.method !== "stripe") ? (
          <button type="button" onClick={() => markPaid(w)} aria-label={`Mark payout #${w.id} paid`}>
            Mark paid
          </button>
        ) : null,
    });
  return (
    <section aria-labelledby="every-payout-title">
      <h2 id="every-payout-title">Every payout</h2>
      <FilterForm label="Filter payouts" onApply={apply}>
        <Field label="Partner (name, email or code)" name="partner" type="search" />
        <SelectField label="State" name="status" options={[["", "Every state"], ...Object.entries(PAYOUT_STATE_TEXT)]} />
        <Field label="From (UTC day)" name="from" type="date" />
        <Field label="Before (UTC day)" name="to" type="date" />
      </FilterForm>
      {partner.view}
      <section aria-label="Payouts" class="inner">
        <PagedTable<WithdrawalRow>
          caption="Payouts"
          path={programPath("/withdrawals")}
          csvPath={programPath("/withdrawals.csv")}
          filters={{ ...filters, partnerId: partner.partnerId }}
          reloadKey={round}
          rowKey={(w) => w.id}
          empty="No payout matches these filters."
          columns={columns}
        />
      </section>
    </section>
  );
}
