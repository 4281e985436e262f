/**
 * The partner's activity over time in one program (GET /api/partner/programs/:programId/stats): two daily charts
 * (clicks and sales; revenue and commission in the program's currency), the same numbers in a sentence, and day by day
 * in a table under a disclosure for screen readers and keyboards. The last 30 days arrive with the rest of the program
 * (main.tsx loads them together); the From/To form shows another period until "Last 30 days" goes back.
 */
import { useEffect, useState } from "preact/hooks";
import { api, query } from "../lib/api";
import { BreakdownCharts, type Breakdowns } from "../lib/breakdowns";
import { DailyChart } from "../lib/chart";
import { count, money } from "../lib/format";
import { t } from "../lib/i18n";
import { plural } from "../../../shared/i18n";
import { Field } from "../lib/ui";
import type { ProgramStats } from "./types";

/** "1 click", "3 clicks". */
const several = (n: number, noun: "click" | "lead" | "sale"): string => t(plural(n, `stats.${noun}.one`, `stats.${noun}.other`), { count: count(n) });

export const statsPath = (programId: number, range: { from?: string; to?: string } = {}): string => `/api/partner/programs/${programId}/stats${query(range)}`;

export const loadStats = (programId: number, range?: { from?: string; to?: string }) => api<ProgramStats>("GET", statsPath(programId, range));

export function Stats({ programId, first, onError }: { programId: number; first: ProgramStats; onError: (error: unknown) => void }) {
  const [range, setRange] = useState<{ from: string; to: string } | null>(null);
  const [other, setOther] = useState<ProgramStats | null>(null);
  const [busy, setBusy] = useState(false);
  const [form, setForm] = useState({ from: first.from, to: first.to });

  // Another program: back to its last 30 days.
  useEffect(() => {
    setRange(null);
    setOther(null);
    setForm({ from: first.from, to: first.to });
  }, [programId]);

  // A new day after a refresh moves the last 30 days: the form follows while no period of its own is shown.
  useEffect(() => {
    if (!range) setForm({ from: first.from, to: first.to });
  }, [first.from, first.to]);

  // A period of the partner's choosing loads on its own, and again when the page refreshes (a new `first`).
  useEffect(() => {
    if (!range) return;
    let current = true;
    setBusy(true);
    loadStats(programId, range).then(
      (s) => {
        if (!current) return;
        setOther(s);
        setBusy(false);
      },
      (e) => {
        if (!current) return;
        setBusy(false);
        setRange(null);
        onError(e);
      },
    );
    return () => {
      current = false;
    };
  }, [programId, range?.from, range?.to, first]);

  const s = range && other ? other : first;
  const cash = (cents: number) => money(cents, s.currency);
  const totals = s.totals;
  const days = s.days.map((d) => d.date);
  const best = s.days.reduce<(typeof s.days)[number] | undefined>((b, d) => (!b || d.sales > b.sales || (d.sales === b.sales && d.clicks > b.clicks) ? d : b), undefined);

  const apply = (event: Event) => {
    event.preventDefault();
    if (!form.from || !form.to) return;
    setRange({ from: form.from, to: form.to });
  };
  const reset = () => {
    setRange(null);
    setOther(null);
    setForm({ from: first.from, to: first.to });
  };

  return (
    <>
      <section id="stats" aria-labelledby="stats-title" aria-busy={busy}>
        <h2 id="stats-title">
          {t("stats.title")}{" "}
          <span class="muted" id="stats-period">
            {t("stats.period", { from: s.from, to: s.to })}
          </span>
        </h2>
        <form class="controls stats-range" aria-label={t("stats.periodLabel")} onSubmit={apply}>
          <Field
            label={t("stats.from")}
            id="stats-from"
            type="date"
            name="from"
            value={form.from}
            max={form.to || undefined}
            required
            onInput={(e) => setForm({ ...form, from: (e.currentTarget as HTMLInputElement).value })}
          />
          <Field
            label={t("stats.to")}
            id="stats-to"
            type="date"
            name="to"
            value={form.to}
            min={form.from || undefined}
            required
            onInput={(e) => setForm({ ...form, to: (e.currentTarget as HTMLInputElement).value })}
          />
          <div class="field">
            <button type="submit" class="secondary" disabled={busy}>
              {t("stats.show")}
            </button>{" "}
            {range && (
              <button type="button" class="secondary" onClick={reset}>
                {t("stats.last30")}
              </button>
            )}
          </div>
        </form>
        <DailyChart
          id="chart-activity"
          title={t("stats.chart.activity")}
          days={days}
          series={[
            { label: t("stats.clicks"), stroke: "#0b57d0", values: s.days.map((d) => d.clicks) },
            { label: t("stats.sales"), stroke: "#116329", values: s.days.map((d) => d.sales) },
          ]}
        />
        <DailyChart
          id="chart-money"
          title={t("stats.chart.money", { currency: s.currency.toUpperCase() })}
          days={days}
          format={cash}
          series={[
            { label: t("stats.revenue"), stroke: "#0b57d0", values: s.days.map((d) => d.revenueCents) },
            { label: t("stats.commission"), stroke: "#116329", values: s.days.map((d) => d.commissionCents) },
          ]}
        />
        {/* The charts are pictures (aria-hidden): the same numbers in words and, day by day, in the table. */}
        <p id="stats-summary">
          {t("stats.summary", {
            from: s.from,
            to: s.to,
            clicks: several(totals.clicks, "click"),
            leads: several(totals.leads, "lead"),
            sales: several(totals.sales, "sale"),
            revenue: cash(totals.revenueCents),
            commission: cash(totals.commissionCents),
          })}{" "}
          {best && (best.sales > 0 || best.clicks > 0)
            ? t("stats.best", { date: best.date, clicks: several(best.clicks, "click"), sales: several(best.sales, "sale") })
            : t("stats.noClicks")}
        </p>
        <details>
          <summary>{t("stats.byDay")}</summary>
          <div class="table-wrap">
            <table id="stats-table">
              <caption class="visually-hidden">{t("stats.caption")}</caption>
              <thead>
                <tr>
                  <th scope="col">{t("stats.day")}</th>
                  <th scope="col" class="num">
                    {t("stats.clicks")}
                  </th>
                  <th scope="col" class="num">
                    {t("stats.leads")}
                  </th>
                  <th scope="col" class="num">
                    {t("stats.sales")}
                  </th>
                  <th scope="col" class="num">
                    {t("stats.revenue")}
                  </th>
                  <th scope="col" class="num">
                    {t("stats.commission")}
                  </th>
                </tr>
              </thead>
              <tbody>
                {s.days.map((d) => (
                  <tr key={d.date}>
                    <th scope="row" class="date">
                      {d.date}
                    </th>
                    <td class="num">{count(d.clicks)}</td>
                    <td class="num">{count(d.leads)}</td>
                    <td class="num">{count(d.sales)}</td>
                    <td class="num">{cash(d.revenueCents)}</td>
                    <td class="num">{cash(d.commissionCents)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      </section>
      <PortalBreakdowns programId={programId} from={s.from} to={s.to} shown={s} onError={onError} />
    </>
  );
}

/**
 * The partner's own breakdowns of the period the figures show (GET /api/partner/programs/:programId/breakdowns), asked
 * again with every new load of the figures (`shown`: a refresh).
 */
function PortalBreakdowns({ programId, from, to, shown, onError }: { programId: number; from: string; to: string; shown: ProgramStats; onError: (error: unknown) => void }) {
  const [data, setData] = useState<Breakdowns | null>(null);
  useEffect(() => {
    let current = true;
    api<Breakdowns>("GET", `/api/partner/programs/${programId}/breakdowns${query({ from, to })}`).then(
      (b) => current && setData(b),
      (e) => current && onError(e),
    );
    return () => {
      current = false;
    };
  }, [programId, from, to, shown]);
  return data ? <BreakdownCharts id="breakdowns" data={data} title={t("stats.breakdowns")} /> : null;
}
