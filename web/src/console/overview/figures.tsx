/**
 * The overview's figures of a period (GET /api/programs/:programId/overview): the figure cards, the two charts with
 * the same numbers in words and in a day-by-day table, and the partners of the period with the total row. Nothing is
 * computed here but formatting and the sums the charts draw.
 */
import { DailyChart } from "../../lib/chart";
import { count, money } from "../../lib/format";
import { partnerHref } from "../session";

/** Every figure of the overview: integers, money in minor units of the program's currency. */
export interface OverviewFigures {
  clicks: number;
  leads: number;
  sales: number;
  revenueCents: number;
  commissions: number;
  pendingCents: number;
  creditedCents: number;
  paidCents: number;
  reversedCents: number;
}

/** The program overview (services/programs/contract.ts, ProgramOverview). */
export interface ProgramOverview {
  programId: number;
  workspaceId: number | null;
  currency: string;
  /** Decimals of the currency (ISO 4217): the money chart draws major units with it. */
  currencyExponent: number;
  from: string;
  to: string;
  test: boolean;
  days: Array<{ date: string } & OverviewFigures>;
  totals: OverviewFigures;
  /** The 100 partners with the most revenue in the range (then clicks). */
  partners: Array<{ partnerId: number; name: string; status: string; referralCode: string; balanceCents: number } & OverviewFigures>;
  /** How many partners had anything in the range (more than `partners` holds when over 100). */
  partnersWithRevenue: number;
  partnersWithClicks: number;
}

/** Commissions earned on a day: every commission created that day, whatever became of it since. */
const earned = (f: OverviewFigures): number => f.pendingCents + f.creditedCents + f.paidCents + f.reversedCents;

export function Figures({ overview: o }: { overview: ProgramOverview }) {
  const t = o.totals;
  const cards: Array<[string, string]> = [
    ["Clicks", count(t.clicks)],
    ["Leads", count(t.leads)],
    ["Sales", count(t.sales)],
    ["Revenue", money(t.revenueCents, o.currency)],
    ["Commissions pending", money(t.pendingCents, o.currency)],
    ["Commissions credited", money(t.creditedCents, o.currency)],
    ["Commissions paid", money(t.paidCents, o.currency)],
    ["Reversed by refunds", money(t.reversedCents, o.currency)],
  ];
  return (
    <section aria-labelledby="figures-title">
      <h2 id="figures-title">
        Figures{" "}
        <span class="muted" id="period">
          {o.from} to {o.to}
          {o.test ? " (test data)" : ""}
        </span>
      </h2>
      <div class="grid" id="figures">
        {cards.map(([label, value]) => (
          <div key={label} class="figure" data-figure={label}>
            <span class="value">{value}</span>
            <span class="label">{label}</span>
          </div>
        ))}
      </div>
    </section>
  );
}

export function Charts({ overview: o }: { overview: ProgramOverview }) {
  const days = o.days.map((d) => d.date);
  const major = (cents: number) => cents / 10 ** o.currencyExponent;
  const t = o.totals;
  const busiest = o.days.reduce<(typeof o.days)[number] | undefined>((best, d) => (!best || d.clicks > best.clicks ? d : best), undefined);
  return (
    <section aria-labelledby="charts-title">
      <h2 id="charts-title">Over time</h2>
      <DailyChart
        id="chart-activity"
        title="Clicks, leads and sales per day"
        days={days}
        series={[
          { label: "Clicks", stroke: "#0b57d0", values: o.days.map((d) => d.clicks) },
          { label: "Leads", stroke: "#8a4b00", values: o.days.map((d) => d.leads) },
          { label: "Sales", stroke: "#116329", values: o.days.map((d) => d.sales) },
        ]}
      />
      <DailyChart
        id="chart-money"
        title={`Revenue and commissions per day (${o.currency.toUpperCase()})`}
        days={days}
        series={[
          { label: "Revenue", stroke: "#0b57d0", values: o.days.map((d) => major(d.revenueCents)) },
          { label: "Commissions earned", stroke: "#116329", values: o.days.map((d) => major(earned(d))) },
          { label: "Reversed", stroke: "#b42318", values: o.days.map((d) => major(d.reversedCents)) },
        ]}
      />
      {/* The charts are pictures: the same numbers in words and in the table, for screen readers and keyboards. */}
      <p id="chart-summary" class="muted">
        From {o.from} to {o.to}: {count(t.clicks)} clicks, {count(t.leads)} leads, {count(t.sales)} sales, revenue {money(t.revenueCents, o.currency)}.{" "}
        {busiest && busiest.clicks > 0 ? `Most clicks on ${busiest.date} (${count(busiest.clicks)}).` : "No clicks in this period."}
      </p>
      <details>
        <summary>The numbers behind the charts, day by day</summary>
        <div class="table-wrap">
          <table id="days-table">
            <caption class="visually-hidden">Figures per day</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col" class="num">
                  Clicks
                </th>
                <th scope="col" class="num">
                  Leads
                </th>
                <th scope="col" class="num">
                  Sales
                </th>
                <th scope="col" class="num">
                  Revenue
                </th>
                <th scope="col" class="num">
                  Commissions earned
                </th>
                <th scope="col" class="num">
                  Reversed
                </th>
              </tr>
            </thead>
            <tbody>
              {o.days.map((d) => (
                <tr key={d.date}>
                  <th scope="row">{d.date}</th>
                  <td class="num">{count(d.clicks)}</td>
                  <td class="num">{count(d.leads)}</td>
                  <td class="num">{count(d.sales)}</td>
                  <td class="num">{money(d.revenueCents, o.currency)}</td>
                  <td class="num">{money(earned(d), o.currency)}</td>
                  <td class="num">{money(d.reversedCents, o.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}

function FigureCells({ figures: f, currency }: { figures: OverviewFigures; currency: string }) {
  return (
    <>
      <td class="num">{count(f.clicks)}</td>
      <td class="num">{count(f.leads)}</td>
      <td class="num">{count(f.sales)}</td>
      <td class="num">{money(f.revenueCents, currency)}</td>
      <td class="num">{money(f.pendingCents, currency)}</td>
      <td class="num">{money(f.creditedCents, currency)}</td>
      <td class="num">{money(f.paidCents, currency)}</td>
      <td class="num">{money(f.reversedCents, currency)}</td>
    </>
  );
}

const PARTNER_COLUMNS = ["Clicks", "Leads", "Sales", "Revenue", "Pending", "Credited", "Paid", "Reversed"];

export function PeriodPartners({ overview: o }: { overview: ProgramOverview }) {
  return (
    <section aria-labelledby="partners-title">
      <h2 id="partners-title">Partners in this period</h2>
      <div class="table-wrap">
        <table id="partners-table">
          <caption class="visually-hidden">Partners in this period, most revenue first</caption>
          <thead>
            <tr>
              <th scope="col">Partner</th>
              {PARTNER_COLUMNS.map((c) => (
                <th key={c} scope="col" class="num">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {o.partners.map((p) => (
              <tr key={p.partnerId} data-partner={p.partnerId}>
                <th scope="row">
                  <a href={partnerHref(p.partnerId, o.programId)}>{p.name || `Partner #${p.partnerId}`}</a> <span class="muted">({p.referralCode})</span>
                </th>
                <FigureCells figures={p} currency={o.currency} />
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">Total</th>
              <FigureCells figures={o.totals} currency={o.currency} />
            </tr>
          </tfoot>
        </table>
      </div>
      {o.partners.length === 0 ? (
        <p id="partners-note" class="muted">
          No partner had revenue or clicks in this period.
        </p>
      ) : (
        Math.max(o.partnersWithRevenue, o.partnersWithClicks) > o.partners.length && (
          <p id="partners-note" class="muted">
            The {o.partners.length} partners with the most revenue, then the most clicks: {o.partnersWithRevenue} had revenue and {o.partnersWithClicks} had clicks in this period.
          </p>
        )
      )}
    </section>
  );
}
