/**
 * A line chart of daily figures (uPlot). The chart is decoration for sighted users: it is aria-hidden, and the
 * screens give the same numbers in words and in a table.
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

export interface DailySeries {
  label: string;
  values: number[];
  color: string;
}

export function DailyChart({ days, series, format, label }: { days: string[]; series: DailySeries[]; format: (value: number) => string; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const chart = new uPlot(
      {
        title: label,
        width: Math.max(280, element.clientWidth || 600),
        height: 220,
        scales: { x: { time: true } },
        axes: [{}, { values: (_u, ticks) => ticks.map(format), size: 80 }],
        series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, value: (_u: uPlot, v: number | null) => (v === null ? "—" : format(v)) }))],
      },
      [xs, ...series.map((s) => s.values)],
      element,
    );
    const resize = () => chart.setSize({ width: Math.max(280, element.clientWidth), height: 220 });
    window.addEventListener("resize", resize);
    return () => {
      window.removeEventListener("resize", resize);
      chart.destroy();
    };
    // Redrawn when the numbers change, not on every render (the arrays are new objects each time).
  }, [JSON.stringify({ days, series, label })]);
  return <div class="chart" ref={box} aria-hidden="true" />;
}
