/**
 * A line chart of daily figures, in UTC days (uPlot). A picture for sighted users only (aria-hidden): every screen
 * that draws one gives the same numbers in words or in a table.
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

export interface DailySeries {
  label: string;
  stroke: string;
  values: number[];
}

/** Axis lines and labels: the page's muted text colour (7.4:1 on white). */
const AXIS = "#4d5661";

export function DailyChart({ id, title, days, series, format }: { id?: string; title: string; days: string[]; series: DailySeries[]; format?: (value: number) => string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = () => Math.max(280, element.clientWidth || 600);
    const chart = new uPlot(
      {
        title,
        width: width(),
        height: 220,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        scales: { x: { time: true } },
        axes: [{ stroke: AXIS }, { stroke: AXIS, ...(format ? { values: (_u: uPlot, ticks: number[]) => ticks.map(format), size: 80 } : {}) }],
        series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.stroke, width: 2, ...(format ? { value: (_u: uPlot, v: number | null) => (v === null ? "—" : format(v)) } : {}) }))],
      },
      [days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000), ...series.map((s) => s.values)],
      element,
    );
    const resize = () => chart.setSize({ width: width(), height: 220 });
    window.addEventListener("resize", resize);
    return () => {
      window.removeEventListener("resize", resize);
      chart.destroy();
    };
    // Drawn again when the numbers change, not on every render (the arrays are new objects each time).
  }, [JSON.stringify({ title, days, series })]);
  return <div class="chart" id={id} ref={box} aria-hidden="true" />;
}
