/**
 * The integration checklist (GET /api/tracking/status/:programId): page views, referrals and payments, each pending
 * or complete. It asks again every 5 seconds while the screen is open, so test events show up as the merchant sends them.
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { Alert } from "../../lib/ui";
import { useConsole } from "../session";

const POLL_MS = 5000;

interface EventStatistics {
  testEventCount: number;
  hasTestEvents: boolean;
  latestTestEvent: { timestamp: string } | null;
}

interface TrackingStatus {
  stepStatuses: Record<Step, "complete" | "pending">;
  statistics: {
    pageview: EventStatistics;
    referrals: EventStatistics;
    payments: { paymentTrackingMode: "processor_connect" | "s2s"; methodReady: boolean; processorConnectionStatus: string };
  };
  hasPartners: boolean;
}

type Step = "pageview" | "referrals" | "payments";

const STEPS: Array<[Step, string]> = [
  ["pageview", "Page views"],
  ["referrals", "Referrals (signups)"],
  ["payments", "Payments"],
];

function describeEvents(stats: EventStatistics): string {
  if (!stats.hasTestEvents || !stats.latestTestEvent) return "No test event yet.";
  const n = stats.testEventCount >= 10 ? "10 or more" : String(stats.testEventCount);
  const at = new Date(stats.latestTestEvent.timestamp).toISOString().replace("T", " ").slice(0, 16);
  return `${n} test event(s); latest at ${at} UTC.`;
}

function describe(step: Step, s: TrackingStatus["statistics"]): string {
  if (step !== "payments") return describeEvents(s[step]);
  const p = s.payments;
  if (!p.methodReady) return `Processor ${p.processorConnectionStatus.replace(/_/g, " ")}.`;
  return p.paymentTrackingMode === "s2s" ? "Server-side sale tracking." : "Processor connected.";
}

export function IntegrationChecklist() {
  const { program } = useConsole();
  const [status, setStatus] = useState<TrackingStatus | undefined>();
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    setStatus(undefined);
    const load = () =>
      api<{ data: TrackingStatus }>("GET", `/api/tracking/status/${program.id}`).then(
        (answer) => current && (setStatus(answer.data), setError(null)),
        (e) => current && setError(errorMessage(e)),
      );
    void load();
    // A hidden tab does not ask; it catches up at the next tick once shown again.
    const timer = setInterval(() => document.visibilityState !== "hidden" && void load(), POLL_MS);
    return () => {
      current = false;
      clearInterval(timer);
    };
  }, [program.id]);

  return (
    <section aria-labelledby="checklist-title">
      <h2 id="checklist-title">Integration checklist</h2>
      {error && <Alert>{error}</Alert>}
      {!status && !error && <p class="muted">Loading…</p>}
      {status && (
        <>
          <ol id="steps" class="rows">
            {STEPS.map(([step, label]) => {
              const state = status.stepStatuses[step];
              return (
                <li key={step} class="step" data-step={step}>
                  <span class={`badge ${state === "complete" ? "ok" : "warn"}`}>{state}</span> <strong>{label}</strong> <span class="detail muted">{describe(step, status.statistics)}</span>
                </li>
              );
            })}
          </ol>
          <p class="muted">
            Partners: <span id="checklist-partners">{status.hasPartners ? "at least one approved" : "none approved yet"}</span>.
          </p>
        </>
      )}
    </section>
  );
}
