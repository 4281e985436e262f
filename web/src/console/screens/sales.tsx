/** Sales: every sale of the program, newest first, with filters, pages and the CSV of the filtered rows. */
import { useState } from "preact/hooks";
import { dateTime, money } from "../../lib/format";
import { FilterForm, Field, PagedTable, SelectField } from "../../lib/ui";
import { usePartnerFilter } from "../partner-filter";
import { partnerHref, useConsole } from "../session";
import { Screen } from "../screen";

interface SaleRow {
  id: number;
  transactionId: string;
  amountCents: number;
  currency: string;
  conversion: { originalAmountCents: number; originalCurrency: string; rate: string; source: string; rateDay: string } | null;
  email: string | null;
  partnerId: number | null;
  attributionMethod: string | null;
  isTest: boolean;
  commissionState: string | null;
  noCommissionReason: string | null;
  occurredAt: string;
  createdAt: string;
}

export function Sales() {
  const { program, programPath } = useConsole();
  const partner = usePartnerFilter();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const apply = async (values: Record<string, string>) => {
    const { partner: text, ...rest } = values;
    await partner.resolve(text);
    setFilters(rest);
  };
  return (
    <Screen title="Sales">
      <FilterForm label="Filter sales" onApply={apply}>
        <Field label="Partner (name, email or code)" name="partner" type="search" />
        <SelectField
          label="Mode"
          name="test"
          options={[
            ["", "Live and test"],
            ["false", "Live only"],
            ["true", "Test only"],
          ]}
        />
        <SelectField
          label="Attributed"
          name="attributed"
          options={[
            ["", "All sales"],
            ["true", "To a partner"],
            ["false", "To nobody"],
          ]}
        />
        <Field label="From (UTC day)" name="from" type="date" />
        <Field label="Before (UTC day)" name="to" type="date" />
      </FilterForm>
      {partner.view}
      <section aria-label="Sales">
        <PagedTable<SaleRow>
          caption="Sales"
          path={programPath("/sales")}
          csvPath={programPath("/sales.csv")}
          filters={{ ...filters, partnerId: partner.partnerId }}
          rowKey={(s) => s.id}
          empty="No sale matches these filters."
          columns={[
            { header: "When", cell: (s) => dateTime(s.occurredAt) },
            { header: "Transaction", cell: (s) => <code>{s.transactionId}</code> },
            { header: "Amount", numeric: true, cell: (s) => money(s.amountCents, s.currency) },
            {
              header: "Paid",
              numeric: true,
              cell: (s) =>
                s.conversion ? (
                  <span title={`Converted at ${s.conversion.rate} (${s.conversion.source}, ${s.conversion.rateDay})`}>
                    {money(s.conversion.originalAmountCents, s.conversion.originalCurrency)}
                  </span>
                ) : (
                  "—"
                ),
            },
            { header: "Customer", cell: (s) => s.email ?? "—" },
            { header: "Partner", cell: (s) => (s.partnerId ? <a href={partnerHref(s.partnerId, program.id)}>Partner #{s.partnerId}</a> : "None") },
            { header: "Commission", cell: (s) => s.commissionState ?? s.noCommissionReason ?? "—" },
            { header: "Mode", cell: (s) => (s.isTest ? "Test" : "Live") },
          ]}
        />
      </section>
    </Screen>
  );
}
