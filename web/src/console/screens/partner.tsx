/**
 * One partner of the program: totals over time, referral code and link, group, status, balance, what they wrote when
 * they applied (if they did), the merchant's private notes, coupon codes, commissions with their refunds and payouts.
 */
import { useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { referralLink } from "../../../../shared/domain/referral-link";
import { api, errorMessage, query } from "../../lib/api";
import { BreakdownCharts, type Breakdowns } from "../../lib/breakdowns";
import { DailyChart } from "../../lib/chart";
import { count, dateTime, day, money } from "../../lib/format";
import { Alert, CopyButton, PagedTable, SelectField, StatusLine, useAsync } from "../../lib/ui";
import { CouponCodes } from "../coupon-codes/codes";
import { CommissionColumns, type CommissionRow } from "./commissions";
import { ApplicationAnswers, DecisionButtons, STATUS_TEXT, type Application, type PartnerRow, type PartnerTotals } from "./partners";
import { PayoutColumns, type WithdrawalRow } from "./payouts";
import { partnerLabel } from "../partner-filter";
import { Screen } from "../screen";
import { useConsole } from "../session";

interface PartnerDetailRow extends PartnerRow {
  heldForReviewCents: number;
  notes: string;
  /** Their application from the public page; null when the partner was added another way. */
  application: Application | null;
}

const DECISION_TEXT: Record<Application["status"], string> = { pending: "Waiting for a decision", approved: "Approved", declined: "Declined" };

interface Overview {
  days: Array<{ date: string } & Omit<PartnerTotals, "balanceCents">>;
  totals: Omit<PartnerTotals, "balanceCents">;
  from: string;
  to: string;
}

interface Groups {
  groups: Array<{ id: number; name: string; isDefault: boolean; memberIds: number[] }>;
}

export function PartnerDetail() {
  const partnerId = Number(useLocation().query.partner);
  const { settings, programPath, can } = useConsole();
  const [said, setSaid] = useState("");
  const [round, setRound] = useState(0);
  const changed = (text: string) => (setSaid(text), setRound((n) => n + 1));
  const partner = useAsync(() => api<PartnerDetailRow>("GET", programPath(`/partners/${partnerId}`)), [partnerId, round]);
  const overview = useAsync(() => api<Overview>("GET", programPath(`/overview${query({ partnerId })}`)), [partnerId]);
  const breakdowns = useAsync(() => api<Breakdowns>("GET", programPath(`/breakdowns${query({ partnerId })}`)), [partnerId]);
  const groups = useAsync(() => api<Groups>("GET", programPath("/rewards")), [partnerId, round]);
  const currency = settings.currency;
  const cash = (cents: number) => money(cents, currency);

  if (partner.error) return <Screen title="Partner">{<Alert>{partner.error}</Alert>}</Screen>;
  const p = partner.data;
  if (!p) return <p class="muted">Loading…</p>;
  const link = referralLink(settings.defaultLandingUrl ? [settings.defaultLandingUrl] : settings.allowedOrigins, p.referralCode);
  const group = groups.data?.groups.find((g) => g.memberIds.includes(partnerId)) ?? groups.data?.groups.find((g) => g.isDefault);

  const moveTo = async (event: Event) => {
    const groupId = Number((event.currentTarget as HTMLSelectElement).value);
    try {
      await api("PUT", programPath("/group-members"), { assignments: [{ partnerId, groupId }] });
      changed(`Moved to ${groups.data?.groups.find((g) => g.id === groupId)?.name ?? "the group"}: their next commissions follow its rewards.`);
    } catch (e) {
      setSaid(errorMessage(e));
    }
  };

  return (
    <Screen title={partnerLabel(p)}>
      <StatusLine text={said} />
      <section aria-labelledby="partner-facts">
        <h2 id="partner-facts">Partner</h2>
        <dl class="facts">
          <dt>Email</dt>
          <dd>{p.email ?? "—"}</dd>
          <dt>Status</dt>
          <dd>
            {STATUS_TEXT[p.status]} {can("programs:write") && <DecisionButtons partner={p} done={changed} />}
          </dd>
          <dt>Enrolled</dt>
          <dd>{day(p.enrolledAt)}</dd>
          <dt>Referral code</dt>
          <dd>
            <code>{p.referralCode}</code>
          </dd>
          <dt>Referral link</dt>
          <dd>
            {link ? (
              <>
                <code class="secret">{link}</code> <CopyButton text={link} label="Copy link" />
              </>
            ) : (
              "Set a default landing URL or an allowed origin in Settings to give partners a link."
            )}
          </dd>
          <dt>Balance</dt>
          <dd id="partner-balance">
            {cash(p.totals.balanceCents)}
            {p.heldForReviewCents > 0 && ` (and ${cash(p.heldForReviewCents)} pending, held for review: see Risk)`}
          </dd>
        </dl>
        {groups.data && group && (
          <div class="group-picker">
            {can("programs:write") ? (
              <SelectField label="Group" value={String(group.id)} onChange={moveTo} options={groups.data.groups.map((g) => [String(g.id), g.name])} />
            ) : (
              <p>Group: {group.name}</p>
            )}
          </div>
        )}
      </section>

      {p.application && (
        <section aria-labelledby="partner-application">
          <h2 id="partner-application">Application</h2>
          <ApplicationAnswers
            application={p.application}
            withEmail={false}
            facts={
              <>
                <dt>Decision</dt>
                <dd>{p.application.decidedAt ? `${DECISION_TEXT[p.application.status]} on ${dateTime(p.application.decidedAt)}` : DECISION_TEXT[p.application.status]}</dd>
                {p.application.declineMessage && (
                  <>
                    <dt>Message sent</dt>
                    <dd class="pre-line">{p.application.declineMessage}</dd>
                  </>
                )}
              </>
            }
          />
        </section>
      )}

      <section aria-labelledby="partner-activity">
        <h2 id="partner-activity">Over time {overview.data && <span class="muted">{`${overview.data.from} to ${overview.data.to}`}</span>}</h2>
        {overview.error && <Alert>{overview.error}</Alert>}
        {overview.data && (
          <>
            <DailyChart
              title="Revenue and commissions per day"
              days={overview.data.days.map((d) => d.date)}
              format={cash}
              series={[
                { label: "Revenue", values: overview.data.days.map((d) => d.revenueCents), stroke: "#0b57d0" },
                { label: "Commissions", values: overview.data.days.map((d) => d.pendingCents + d.creditedCents + d.paidCents), stroke: "#116329" },
              ]}
            />
            <p id="partner-summary">
              {`In these 30 days: ${count(overview.data.totals.clicks)} clicks, ${count(overview.data.totals.leads)} leads, ${count(overview.data.totals.sales)} sales, revenue ${cash(overview.data.totals.revenueCents)}.`}{" "}
              {`All time: ${count(p.totals.sales)} sales, revenue ${cash(p.totals.revenueCents)}, commissions pending ${cash(p.totals.pendingCents)}, credited ${cash(p.totals.creditedCents)}, paid ${cash(p.totals.paidCents)}, reversed by refunds ${cash(p.totals.reversedCents)}.`}
            </p>
          </>
        )}
      </section>

      {breakdowns.data && <BreakdownCharts id="partner-breakdowns" data={breakdowns.data} title="Where their traffic came from" />}
      {breakdowns.error && <Alert>{breakdowns.error}</Alert>}

      <Notes partnerId={partnerId} notes={p.notes} />

      <CouponCodes partnerId={partnerId} partnerName={partnerLabel(p)} />

      <section aria-labelledby="partner-commissions">
        <h2 id="partner-commissions">Commissions</h2>
        <PagedTable<CommissionRow>
          caption="The partner's commissions"
          path={programPath("/commissions")}
          filters={{ partnerId }}
          rowKey={(c) => c.id}
          empty="No commission yet."
          columns={CommissionColumns(currency).filter((c) => c.header !== "Partner")}
        />
      </section>

      <section aria-labelledby="partner-payouts">
        <h2 id="partner-payouts">Payouts</h2>
        <PagedTable<WithdrawalRow>
          caption="The partner's payouts"
          path={programPath("/withdrawals")}
          filters={{ partnerId }}
          reloadKey={round}
          rowKey={(w) => w.id}
          empty="No payout yet."
          columns={PayoutColumns(currency).filter((c) => c.header !== "Partner")}
        />
      </section>
    </Screen>
  );
}

/** The merchant's private notes on the partner (never shown to the partner). */
function Notes({ partnerId, notes }: { partnerId: number; notes: string }) {
  const { programPath, can } = useConsole();
  const [said, setSaid] = useState("");
  const save = async (event: Event) => {
    event.preventDefault();
    const text = String(new FormData(event.currentTarget as HTMLFormElement).get("notes") ?? "");
    try {
      await api("PATCH", programPath(`/partners/${partnerId}`), { notes: text });
      setSaid("Notes saved.");
    } catch (e) {
      setSaid(errorMessage(e));
    }
  };
  return (
    <section aria-labelledby="partner-notes">
      <h2 id="partner-notes">Private notes</h2>
      <form onSubmit={save}>
        <label for="notes">Notes (only your team sees them)</label>
        <textarea id="notes" name="notes" rows={4} maxLength={2000} readOnly={!can("programs:write")} defaultValue={notes} />
        {can("programs:write") && (
          <p>
            <button type="submit">Save notes</button>
          </p>
        )}
      </form>
      <StatusLine text={said} />
    </section>
  );
}
