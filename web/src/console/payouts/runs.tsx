/**
 * The Payouts screen's runs: "Preview a run" asks what a run would pay now (the payouts by partner, the partners it
 * would skip with the reason, the total; nothing is written), "Confirm and pay" starts it with the preview's period
 * and total (refused with payout_preview_changed when balances moved meanwhile: preview again), then the run opens.
 * Under it, the program's runs, newest first.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { api, ApiError, errorMessage, query } from "../../lib/api";
import { dateTime, money } from "../../lib/format";
import { Alert, Field, PagedTable } from "../../lib/ui";
import { partnerHref, useConsole } from "../session";
import { methodText, RUN_STATUS_TEXT, runHref, several, TRIGGER_TEXT, type PayoutRun, type RunPreview } from "./model";

export function Runs({ say }: { say: (text: string) => void }) {
  const { program, programPath, can } = useConsole();
  const { route } = useLocation();
  const [preview, setPreview] = useState<RunPreview | null>(null);
  const [period, setPeriod] = useState("");
  const [error, setError] = useState<{ message: string; changed: boolean } | null>(null);
  const [busy, setBusy] = useState(false);
  const previewHeading = useRef<HTMLHeadingElement>(null);

  // The preview's heading takes the focus when a preview arrives, so the keyboard and screen readers go on from there.
  useEffect(() => {
    if (preview) previewHeading.current?.focus();
  }, [preview]);

  const ask = async (periodKey: string) => {
    setBusy(true);
    setError(null);
    say("");
    try {
      setPreview(await api<RunPreview>("GET", programPath(`/payout-runs/preview${query({ periodKey: periodKey.trim() })}`)));
    } catch (e) {
      setPreview(null);
      setError({ message: errorMessage(e), changed: false });
    } finally {
      setBusy(false);
    }
  };

  const confirm = async (p: RunPreview) => {
    setBusy(true);
    setError(null);
    try {
      const answer = await api<{ created: boolean; run: PayoutRun }>("POST", programPath("/payout-runs"), { periodKey: p.periodKey, expectedTotalCents: p.totalCents, trigger: "console" });
      const run = answer.run;
      say(
        answer.created
          ? `Run ${run.periodKey} started: ${several(run.totals.payouts, "payout")} of ${money(run.totals.amountCents, run.currency)} in all.`
          : `Period ${run.periodKey} already had this run: nobody was paid twice.`,
      );
      setPreview(null);
      route(runHref(run.id, program.id));
    } catch (e) {
      setError({ message: errorMessage(e), changed: e instanceof ApiError && e.code === "payout_preview_changed" });
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: Event) => {
    event.preventDefault();
    void ask(period);
  };

  return (
    <section aria-labelledby="runs-title">
      <h2 id="runs-title">Payout runs</h2>
      <p>
        A run pays every partner whose available balance reaches their group's minimum payout: one payout each, by the method they chose in the portal. Preview it first: nothing is paid
        until you confirm.
      </p>
      {can("payouts:write") ? (
        <form class="controls" aria-label="Preview a payout run" onSubmit={submit}>
          <Field
            label="Period (optional)"
            name="periodKey"
            value={period}
            onInput={(e) => setPeriod((e.currentTarget as HTMLInputElement).value)}
            maxLength={64}
            pattern="[A-Za-z0-9][A-Za-z0-9._\-]*"
            placeholder="2026-11"
            hint="One run per period. Empty: today's date."
          />
          <div>
            <button type="submit" disabled={busy}>
              Preview a run
            </button>
          </div>
        </form>
      ) : (
        <p class="muted">Read-only: your role ({program.role}) cannot preview or start runs; an owner, admin or billing member can.</p>
      )}
      {error && (
        <div class="run-error">
          <Alert>{error.message}</Alert>
          {error.changed && preview && (
            <button type="button" class="secondary" disabled={busy} onClick={() => void ask(preview.periodKey)}>
              Preview again
            </button>
          )}
        </div>
      )}
      {preview && (
        <div class="preview-box run-preview" role="region" aria-labelledby="run-preview-title">
          <h3 id="run-preview-title" ref={previewHeading} tabIndex={-1} class="focus-target">
            Preview of the run for {preview.periodKey}
          </h3>
          {preview.existingRunId !== null ? (
            <p>
              This period already has a run: starting it again pays nobody twice. <a href={runHref(preview.existingRunId, program.id)}>Open the run for {preview.periodKey}</a>
            </p>
          ) : (
            <p id="run-preview-total" class="preview">
              {preview.payouts.length === 0 ? "Nobody to pay now." : `${several(preview.payouts.length, "payout")}, ${money(preview.totalCents, preview.currency)} in all.`}
            </p>
          )}
          {preview.payouts.length > 0 && (
            <div class="table-wrap">
              <table id="run-preview-payouts">
                <caption class="visually-hidden">The payouts the run would make</caption>
                <thead>
                  <tr>
                    <th scope="col">Partner</th>
                    <th scope="col">Method</th>
                    <th scope="col" class="num">
                      Commissions
                    </th>
                    <th scope="col" class="num">
                      Amount
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {preview.payouts.map((p) => (
                    <tr key={p.partnerId} data-partner={p.partnerId}>
                      <th scope="row">
                        <a href={partnerHref(p.partnerId, program.id)}>{p.partnerName}</a>
                      </th>
                      <td>{methodText(p.method)}</td>
                      <td class="num">{p.commissions}</td>
                      <td class="num">{money(p.amountCents, preview.currency)}</td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr>
                    <th scope="row" colSpan={3}>
                      Total
                    </th>
                    <td class="num">{money(preview.totalCents, preview.currency)}</td>
                  </tr>
                </tfoot>
              </table>
            </div>
          )}
          <SkippedTable skipped={preview.skipped} currency={preview.currency} caption="Partners the run would skip" title="Skipped (they stay payable)" />
          {preview.existingRunId === null && preview.payouts.length > 0 && (
            <p class="actions wrap">
              <button type="button" disabled={busy} onClick={() => void confirm(preview)}>
                Confirm and pay
              </button>
              <button type="button" class="secondary" onClick={() => (setPreview(null), setError(null))}>
                Cancel
              </button>
            </p>
          )}
        </div>
      )}
      <h3>Runs</h3>
      <PagedTable<PayoutRun>
        caption="Payout runs, newest first"
        path={programPath("/payout-runs")}
        filters={{}}
        rowKey={(r) => r.id}
        empty="No run yet."
        columns={[
          { header: "Period", cell: (r) => <a href={runHref(r.id, program.id)}>{r.periodKey}</a> },
          { header: "Started", cell: (r) => `${dateTime(r.createdAt)} by ${TRIGGER_TEXT[r.trigger] ?? r.trigger}` },
          { header: "Payouts", numeric: true, cell: (r) => `${r.totals.payouts} · ${money(r.totals.amountCents, r.currency)}` },
          { header: "Paid", numeric: true, cell: (r) => money(r.totals.paidCents, r.currency) },
          { header: "Processing", numeric: true, cell: (r) => money(r.totals.processingCents + r.totals.openCents, r.currency) },
          { header: "Failed", numeric: true, cell: (r) => (r.totals.failed ? <span class="bad">{`${r.totals.failed} · ${money(r.totals.failedCents, r.currency)}`}</span> : "0") },
          { header: "Skipped", numeric: true, cell: (r) => r.skipped.length },
          { header: "Status", cell: (r) => RUN_STATUS_TEXT[r.status] ?? r.status },
        ]}
      />
    </section>
  );
}

/** The partners a run skips (or skipped), with the reason: they stay payable for a later run. */
export function SkippedTable({ skipped, currency, caption, title }: { skipped: RunPreview["skipped"]; currency: string; caption: string; title?: string }) {
  const { program } = useConsole();
  if (skipped.length === 0) return null;
  return (
    <>
      {title && <h4>{title}</h4>}
      <div class="table-wrap">
        <table class="skipped">
          <caption class="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              <th scope="col">Partner</th>
              <th scope="col" class="num">
                Available
              </th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {skipped.map((s) => (
              <tr key={s.partnerId} data-partner={s.partnerId} data-code={s.code}>
                <th scope="row">
                  <a href={partnerHref(s.partnerId, program.id)}>{s.partnerName}</a>
                </th>
                <td class="num">{money(s.availableCents, currency)}</td>
                <td>{s.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
