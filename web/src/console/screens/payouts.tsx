/** Payouts: partners' withdrawals, open and paid, with filters and CSV; someone with payouts:write marks an open one paid. */
import { useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { dateTime, money } from "../../lib/format";
import { FilterForm, Field, PagedTable, SelectField, StatusLine, type Column } from "../../lib/ui";
import { usePartnerFilter } from "../partner-filter";
import { Screen } from "../screen";
import { partnerHref, useConsole } from "../session";

export interface WithdrawalRow {
  id: number;
  partnerId: number;
  currency: string;
  amountCents: number;
  status: "open" | "paid" | "cancelled";
  createdAt: string;
  paidAt: string | null;
}

const STATUS_TEXT: Record<WithdrawalRow["status"], string> = { open: "Open (to pay)", paid: "Paid", cancelled: "Cancelled" };

/** The payout columns, shared with the partner screen (which drops "Partner"). */
export function PayoutColumns(currency: string, programId?: number): Array<Column<WithdrawalRow>> {
  return [
    { header: "Requested", cell: (w) => dateTime(w.createdAt) },
    { header: "Partner", cell: (w) => (programId ? <a href={partnerHref(w.partnerId, programId)}>Partner #{w.partnerId}</a> : `#${w.partnerId}`) },
    { header: "Amount", numeric: true, cell: (w) => money(w.amountCents, currency) },
    { header: "State", cell: (w) => STATUS_TEXT[w.status] },
    { header: "Paid", cell: (w) => (w.paidAt ? dateTime(w.paidAt) : "—") },
  ];
}

export function Payouts() {
  const { program, settings, programPath, can } = useConsole();
  const partner = usePartnerFilter();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [said, setSaid] = useState("");
  const [round, setRound] = useState(0);
  const apply = async ({ partner: text, ...rest }: Record<string, string>) => {
    await partner.resolve(text);
    setFilters(rest);
  };
  const markPaid = async (w: WithdrawalRow) => {
    try {
      await api("POST", programPath(`/withdrawals/${w.id}/pay`));
      setSaid(`Payout #${w.id} of ${money(w.amountCents, settings.currency)} marked paid.`);
      setRound((n) => n + 1);
    } catch (e) {
      setSaid(errorMessage(e));
    }
  };
  const columns = PayoutColumns(settings.currency, program.id);
  if (can("payouts:write"))
    columns.push({
      header: "Action",
      cell: (w) =>
        w.status === "open" ? (
          <button type="button" onClick={() => markPaid(w)} aria-label={`Mark payout #${w.id} paid`}>
            Mark paid
          </button>
        ) : null,
    });
  return (
    <Screen title="Payouts">
      <FilterForm label="Filter payouts" onApply={apply}>
        <Field label="Partner (name, email or code)" name="partner" type="search" />
        <SelectField label="State" name="status" options={[["", "Every state"], ...Object.entries(STATUS_TEXT)]} />
        <Field label="From (UTC day)" name="from" type="date" />
        <Field label="Before (UTC day)" name="to" type="date" />
      </FilterForm>
      {partner.view}
      <StatusLine text={said} />
      <section aria-label="Payouts">
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
    </Screen>
  );
}
