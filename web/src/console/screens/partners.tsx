/** Partners: everyone enrolled in the program with their all-time totals; search, status filter, approve or decline, CSV. */
import { useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { count, day, money } from "../../lib/format";
import { FilterForm, Field, PagedTable, SelectField, StatusLine } from "../../lib/ui";
import { partnerLabel } from "../partner-filter";
import { Screen } from "../screen";
import { partnerHref, useConsole } from "../session";

export interface PartnerTotals {
  clicks: number;
  leads: number;
  sales: number;
  revenueCents: number;
  commissions: number;
  pendingCents: number;
  creditedCents: number;
  paidCents: number;
  reversedCents: number;
  balanceCents: number;
}

export interface PartnerRow {
  partnerId: number;
  name: string;
  email: string | null;
  status: "approved" | "pending" | "declined";
  referralCode: string;
  enrolledAt: string;
  totals: PartnerTotals;
}

export const STATUS_TEXT: Record<PartnerRow["status"], string> = { approved: "Approved", pending: "Waiting for approval", declined: "Declined" };

/** Approve or decline buttons for a partner whose status allows it; `done` runs after the change with a sentence saying what happened. */
export function DecisionButtons({ partner, done }: { partner: Pick<PartnerRow, "partnerId" | "name" | "email" | "status">; done: (said: string) => void }) {
  const { programPath } = useConsole();
  const decide = async (decision: "approve" | "decline") => {
    try {
      await api("POST", programPath(`/partners/${partner.partnerId}/${decision}`));
      done(`${partnerLabel(partner)} ${decision === "approve" ? "approved" : "declined"}.`);
    } catch (e) {
      done(errorMessage(e));
    }
  };
  const who = partnerLabel(partner);
  return (
    <span class="actions">
      {partner.status !== "approved" && (
        <button type="button" onClick={() => decide("approve")} aria-label={`Approve ${who}`}>
          Approve
        </button>
      )}{" "}
      {partner.status !== "declined" && (
        <button type="button" class="secondary" onClick={() => decide("decline")} aria-label={`Decline ${who}`}>
          Decline
        </button>
      )}
    </span>
  );
}

export function Partners() {
  const { program, settings, programPath, can } = useConsole();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [said, setSaid] = useState("");
  const [round, setRound] = useState(0);
  const currency = settings.currency;
  return (
    <Screen title="Partners">
      <FilterForm label="Find partners" onApply={setFilters}>
        <Field label="Search (name, email or code)" name="q" type="search" />
        <SelectField
          label="Status"
          name="status"
          options={[
            ["", "Every status"],
            ["pending", "Waiting for approval"],
            ["approved", "Approved"],
            ["declined", "Declined"],
          ]}
        />
      </FilterForm>
      <StatusLine text={said} />
      <section aria-label="Partners">
        <PagedTable<PartnerRow>
          caption="Partners"
          path={programPath("/partners")}
          csvPath={programPath("/partners.csv")}
          filters={filters}
          reloadKey={round}
          rowKey={(p) => p.partnerId}
          empty="No partner matches."
          columns={[
            {
              header: "Partner",
              cell: (p) => (
                <>
                  <a href={partnerHref(p.partnerId, program.id)}>{partnerLabel(p)}</a>
                  {p.email && p.name && <div class="muted">{p.email}</div>}
                </>
              ),
            },
            { header: "Code", cell: (p) => <code>{p.referralCode}</code> },
            { header: "Status", cell: (p) => STATUS_TEXT[p.status] },
            { header: "Enrolled", cell: (p) => day(p.enrolledAt) },
            { header: "Clicks", numeric: true, cell: (p) => count(p.totals.clicks) },
            { header: "Sales", numeric: true, cell: (p) => count(p.totals.sales) },
            { header: "Revenue", numeric: true, cell: (p) => money(p.totals.revenueCents, currency) },
            { header: "Balance", numeric: true, cell: (p) => money(p.totals.balanceCents, currency) },
            ...(can("programs:write") ? [{ header: "Decision", cell: (p: PartnerRow) => <DecisionButtons partner={p} done={(text) => (setSaid(text), setRound((n) => n + 1))} /> }] : []),
          ]}
        />
      </section>
    </Screen>
  );
}
