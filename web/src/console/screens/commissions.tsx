/** Commissions: every commission of the program with its refunds, filtered by partner, state and day; CSV. */
import { useState } from "preact/hooks";
import { dateTime, money } from "../../lib/format";
import { FilterForm, Field, PagedTable, SelectField, type Column } from "../../lib/ui";
import { usePartnerFilter } from "../partner-filter";
import { Screen } from "../screen";
import { partnerHref, useConsole } from "../session";

export interface CommissionRow {
  id: number;
  partnerId: number;
  kind: "sale" | "lead";
  transactionId: string | null;
  currency: string;
  saleAmountCents: number | null;
  /** A sale paid in another currency: what was paid; its refunds are in that currency. */
  saleOriginal: { amountCents: number; currency: string } | null;
  amountCents: number;
  refundedCents: number;
  deductedCents: number;
  netCents: number;
  status: string;
  approvableAt: string | null;
  createdAt: string;
  refunds: Array<{ id: number; amountCents: number; deductionCents: number; reason: string | null; createdAt: string }>;
}

/** What a commission's state means to a merchant. */
const STATE_TEXT: Record<string, string> = {
  pending: "Pending (in the hold period)",
  approved: "Credited",
  paid: "Paid",
  refunded: "Reduced by refunds",
  reversed: "Reversed",
};

/** The commission columns, shared with the partner screen (which drops "Partner"). */
export function CommissionColumns(currency: string, programId?: number): Array<Column<CommissionRow>> {
  const cash = (cents: number) => money(cents, currency);
  // Refunds of a converted sale are in the currency it was paid in.
  const paid = (c: CommissionRow, cents: number) => (c.saleOriginal ? money(cents, c.saleOriginal.currency) : cash(cents));
  return [
    { header: "Created", cell: (c) => dateTime(c.createdAt) },
    { header: "Partner", cell: (c) => (programId ? <a href={partnerHref(c.partnerId, programId)}>Partner #{c.partnerId}</a> : `#${c.partnerId}`) },
    { header: "For", cell: (c) => (c.kind === "lead" ? "A signup" : <code>{c.transactionId}</code>) },
    {
      header: "Sale",
      numeric: true,
      cell: (c) =>
        c.saleAmountCents === null ? "—" : c.saleOriginal ? `${cash(c.saleAmountCents)} (paid ${money(c.saleOriginal.amountCents, c.saleOriginal.currency)})` : cash(c.saleAmountCents),
    },
    { header: "Commission", numeric: true, cell: (c) => cash(c.amountCents) },
    {
      header: "Refunds",
      cell: (c) =>
        c.refunds.length === 0 ? (
          "—"
        ) : (
          <ul class="plain">
            {c.refunds.map((r) => (
              <li key={r.id}>{`${paid(c, r.amountCents)} refunded, ${cash(r.deductionCents)} taken back${r.reason ? ` (${r.reason})` : ""}`}</li>
            ))}
          </ul>
        ),
    },
    { header: "Net", numeric: true, cell: (c) => cash(c.netCents) },
    { header: "State", cell: (c) => STATE_TEXT[c.status] ?? c.status },
  ];
}

export function Commissions() {
  const { program, settings, programPath } = useConsole();
  const partner = usePartnerFilter();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const apply = async ({ partner: text, ...rest }: Record<string, string>) => {
    await partner.resolve(text);
    setFilters(rest);
  };
  return (
    <Screen title="Commissions">
      <FilterForm label="Filter commissions" onApply={apply}>
        <Field label="Partner (name, email or code)" name="partner" type="search" />
        <SelectField label="State" name="status" options={[["", "Every state"], ...Object.entries(STATE_TEXT)]} />
        <Field label="From (UTC day)" name="from" type="date" />
        <Field label="Before (UTC day)" name="to" type="date" />
      </FilterForm>
      {partner.view}
      <section aria-label="Commissions">
        <PagedTable<CommissionRow>
          caption="Commissions"
          path={programPath("/commissions")}
          csvPath={programPath("/commissions.csv")}
          filters={{ ...filters, partnerId: partner.partnerId }}
          rowKey={(c) => c.id}
          empty="No commission matches these filters."
          columns={CommissionColumns(settings.currency, program.id)}
        />
      </section>
    </Screen>
  );
}
