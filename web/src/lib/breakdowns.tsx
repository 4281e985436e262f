/**
 * Traffic breakdowns (GET .../breakdowns; shared/domain/breakdowns.ts): clicks, leads or sales by country, device,
 * browser and referrer domain, each dimension a bar chart that is its own table: a row per value (the top 10, then
 * "Other"), its number and share in text, the bar beside it drawn with CSS (aria-hidden: the numbers are in the row).
 * The family is a native select (keyboard and screen readers as any form control); the tables wrap to one column on
 * a narrow screen. Nothing is computed here but shares and formatting.
 */
import { useState } from "preact/hooks";
import { count, money } from "./format";

type Entry = { value: string } & Record<string, number | string>;
type Dimension = { values: Entry[]; other: Record<string, number> | null };
type Family = Record<"country" | "device" | "browser" | "referrer", Dimension>;

/** The answer of the breakdowns routes (services/programs/contract.ts, ProgramBreakdowns). */
export interface Breakdowns {
  currency: string;
  from: string;
  to: string;
  clicks: Family;
  leads: Family;
  sales: Family;
}

const DIMENSIONS = [
  ["country", "Country"],
  ["device", "Device"],
  ["browser", "Browser"],
  ["referrer", "Referrer"],
] as const;

const FAMILIES = {
  clicks: { label: "Clicks", figure: "clicks" },
  leads: { label: "Leads", figure: "leads" },
  sales: { label: "Sales (revenue)", figure: "amountCents" },
} as const;

type FamilyName = keyof typeof FAMILIES;

/** The bucket words the API uses, as a person reads them. */
const shown = (value: string): string => (value === "unknown" ? "Unknown" : value === "direct" ? "Direct (no referrer)" : value);

export function BreakdownCharts({ id, data, title = "Where it came from" }: { id: string; data: Breakdowns; title?: string }) {
  const [family, setFamily] = useState<FamilyName>("clicks");
  const { figure, label } = FAMILIES[family];
  const format = (n: number) => (figure === "amountCents" ? money(n, data.currency) : count(n));
  return (
    <section id={id} class="breakdowns" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>
        {title}{" "}
        <span class="muted">
          {data.from} to {data.to}
        </span>
      </h2>
      <div class="controls">
        <div>
          <label for={`${id}-family`}>Show</label>
          <select id={`${id}-family`} value={family} onChange={(e) => setFamily(e.currentTarget.value as FamilyName)}>
            {Object.entries(FAMILIES).map(([name, f]) => (
              <option key={name} value={name}>
                {f.label}
              </option>
            ))}
          </select>
        </div>
      </div>
      <div class="breakdown-grid">
        {DIMENSIONS.map(([dimension, dimensionLabel]) => {
          const d = data[family][dimension];
          const rows = [
            ...d.values.map((e) => ({ value: shown(e.value), n: Number(e[figure]), sales: Number(e.sales ?? 0) })),
            ...(d.other ? [{ value: "Other", n: d.other[figure], sales: d.other.sales ?? 0 }] : []),
          ];
          const total = rows.reduce((sum, r) => sum + r.n, 0);
          const top = Math.max(1, ...rows.map((r) => r.n));
          return (
            <div class="table-wrap" key={dimension}>
              <table class="breakdown" id={`${id}-${dimension}`} data-dimension={dimension}>
                <caption>
                  {label} by {dimensionLabel.toLowerCase()}
                </caption>
                <thead>
                  <tr>
                    <th scope="col">{dimensionLabel}</th>
                    <th scope="col" class="num">
                      {figure === "amountCents" ? "Revenue" : label}
                    </th>
                    {figure === "amountCents" && (
                      <th scope="col" class="num">
                        Sales
                      </th>
                    )}
                    <th scope="col" class="num">
                      Share
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {rows.length === 0 && (
                    <tr>
                      <td colSpan={figure === "amountCents" ? 4 : 3} class="muted">
                        Nothing in this period.
                      </td>
                    </tr>
                  )}
                  {rows.map((r) => (
                    <tr key={r.value}>
                      <th scope="row" class="breakdown-value">
                        <span class="bar" aria-hidden="true" style={{ width: `${Math.round((100 * r.n) / top)}%` }} />
                        <span class="bar-label">{r.value}</span>
                      </th>
                      <td class="num">{format(r.n)}</td>
                      {figure === "amountCents" && <td class="num">{count(r.sales)}</td>}
                      <td class="num">{total ? `${Math.round((100 * r.n) / total)}%` : "—"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          );
        })}
      </div>
    </section>
  );
}
