/**
 * One payout run (/dashboard/payouts?run=ID): its period, state and totals, the payouts that failed with the reason,
 * the partners it skipped, the files (PayPal's batch upload, the bank file, the CSV export) and every payout. With
 * payouts:write, a PayPal or bank payout on its way is marked paid or failed (with PayPal's or the bank's reason),
 * one by one or all of a method at once (asked once more).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { dateTime, money } from "../../lib/format";
import { Alert, Confirm, StatusLine, useAsync } from "../../lib/ui";
import { useFocusAfter } from "../overview/focus";
import { Screen } from "../screen";
import { partnerHref, screenHref, useConsole } from "../session";
import { SkippedTable } from "./runs";
import {
  awaitsMarking,
  failureText,
  FILE_METHODS,
  methodInSentence,
  methodText,
  PAYOUT_STATE_TEXT,
  RUN_STATUS_TEXT,
  several,
  TRIGGER_TEXT,
  type FileMethod,
  type RunDetail,
  type RunPayout,
} from "./model";

const TRANSFER_POLL_MS = 3_000;

/** The method as a sentence names it: "2 PayPal payouts", "1 bank payout". */
const FILE_WORD: Record<FileMethod, string> = { paypal: "PayPal", bank: "bank" };

export function RunDetailView({ runId, said, say }: { runId: number; said: string; say: (text: string) => void }) {
  const { program, programPath, can } = useConsole();
  const run = useAsync(() => api<RunDetail>("GET", programPath(`/payout-runs/${runId}`)), [program.id, runId]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [failing, setFailing] = useState<number | null>(null);
  const [markingAll, setMarkingAll] = useState<FileMethod | null>(null);
  const focusLater = useFocusAfter(run.data);
  const mayPay = can("payouts:write");
  // Stripe transfers take seconds: while one is on its way, the run is read again every few seconds (tab visible).
  const transferring = run.data?.payouts.some((p) => p.method === "stripe" && (p.status === "open" || p.status === "processing")) ?? false;
  useEffect(() => {
    if (!transferring) return;
    const timer = setInterval(() => document.visibilityState === "visible" && run.reload(), TRANSFER_POLL_MS);
    return () => clearInterval(timer);
  }, [transferring]);

  /** Runs one action, says what it did and loads the run again; the focus goes to `focusId` after the reload. */
  const act = async (work: () => Promise<string>, focusId: string) => {
    setBusy(true);
    setError(null);
    try {
      say(await work());
      setFailing(null);
      setMarkingAll(null);
      focusLater(() => document.getElementById(focusId));
      run.reload();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const markPaid = (p: RunPayout) =>
    act(async () => {
      await api("POST", programPath(`/withdrawals/${p.id}/pay`));
      return `Payout #${p.id} to ${p.partnerName} (${money(p.amountCents, p.currency)}) marked paid.`;
    }, "run-payouts-title");

  const markFailed = (p: RunPayout, reason: string) =>
    act(async () => {
      await api("POST", programPath(`/withdrawals/${p.id}/fail`), { reason });
      return `Payout #${p.id} to ${p.partnerName} marked failed: its amount is back in their balance for the next run.`;
    }, "run-payouts-title");

  const markAllPaid = (method: FileMethod) =>
    act(async () => {
      const answer = await api<{ paid: number }>("POST", programPath(`/payout-runs/${runId}/mark-paid`), { method });
      return `${several(answer.paid, `${FILE_WORD[method]} payout`)} marked paid.`;
    }, "run-files-title");

  if (run.error)
    return (
      <Screen title="Payout run">
        <BackLink />
        <Alert>{run.error}</Alert>
      </Screen>
    );
  const r = run.data;
  if (!r)
    return (
      <Screen title="Payout run">
        <BackLink />
        <p class="muted">Loading…</p>
      </Screen>
    );
  const cash = (cents: number) => money(cents, r.currency);
  const failed = r.payouts.filter((p) => p.status === "failed");
  const methods = new Set(r.payouts.map((p) => p.method));
  const waiting = (method: FileMethod) => r.payouts.filter((p) => p.method === method && awaitsMarking(p));
  const file = (name: string) => programPath(`/payout-runs/${r.id}/${name}`);

  return (
    <Screen title={`Payout run ${r.periodKey}`}>
      <BackLink />
      <StatusLine text={said} />
      {error && <Alert>{error}</Alert>}
      <section aria-labelledby="run-facts-title">
        <h2 id="run-facts-title">Run</h2>
        <dl class="facts">
          <dt>Period</dt>
          <dd>{`${r.periodKey} (run #${r.id})`}</dd>
          <dt>Status</dt>
          <dd id="run-status">{RUN_STATUS_TEXT[r.status] ?? r.status}</dd>
          <dt>Started</dt>
          <dd>{`${dateTime(r.createdAt)} by ${TRIGGER_TEXT[r.trigger] ?? r.trigger}`}</dd>
          <dt>Completed</dt>
          <dd>{r.completedAt ? dateTime(r.completedAt) : "Not yet: some payouts are still on their way"}</dd>
        </dl>
        {transferring && <p class="muted">Stripe transfers are on their way: this page updates itself.</p>}
        <div class="grid" id="run-totals">
          <Figure name="payouts" label={several(r.totals.payouts, "payout")} value={cash(r.totals.amountCents)} />
          <Figure name="paid" label={`Paid (${r.totals.paid})`} value={cash(r.totals.paidCents)} />
          <Figure name="processing" label={`On their way (${r.totals.processing + r.totals.open})`} value={cash(r.totals.processingCents + r.totals.openCents)} />
          <Figure name="failed" label={`Failed (${r.totals.failed})`} value={cash(r.totals.failedCents)} />
          <Figure name="skipped" label="Partners skipped" value={String(r.skipped.length)} />
        </div>
      </section>

      <section aria-labelledby="run-files-title">
        <h2 id="run-files-title" tabIndex={-1} class="focus-target">
          Files
        </h2>
        <p>PayPal and bank payouts are on their way once the run starts: upload the file to PayPal or your bank, then mark them paid (or failed, with the reason given).</p>
        <p class="actions wrap">
          {mayPay && methods.has("paypal") && (
            <a class="button secondary" href={file("paypal.csv")} download>
              Download PayPal file
            </a>
          )}
          {mayPay && methods.has("bank") && (
            <a class="button secondary" href={file("bank.csv")} download>
              Download bank file
            </a>
          )}
          <a class="button secondary" href={file("payouts.csv")} download>
            Download CSV export
          </a>
        </p>
        {mayPay &&
          FILE_METHODS.map((method) => {
            const payouts = waiting(method);
            if (payouts.length === 0) return null;
            const total = cash(payouts.reduce((sum, p) => sum + p.amountCents, 0));
            return markingAll === method ? (
              <Confirm
                key={method}
                question={`Mark ${several(payouts.length, `${FILE_WORD[method]} payout`)} (${total}) paid? Do it once ${method === "paypal" ? "PayPal" : "your bank"} has sent them.`}
                confirmLabel={`Yes, mark ${FILE_WORD[method]} payouts paid`}
                busy={busy}
                onConfirm={() => void markAllPaid(method)}
                onCancel={() => {
                  setMarkingAll(null);
                  requestAnimationFrame(() => document.getElementById(`mark-all-${method}`)?.focus());
                }}
              />
            ) : (
              <p key={method}>
                <button type="button" id={`mark-all-${method}`} onClick={() => setMarkingAll(method)}>
                  {`Mark all ${FILE_WORD[method]} payouts paid`}
                </button>{" "}
                <span class="muted">{`${payouts.length} on their way, ${total}`}</span>
              </p>
            );
          })}
      </section>

      {failed.length > 0 && (
        <section aria-labelledby="run-failures-title">
          <h2 id="run-failures-title">Failures</h2>
          <p>Their amounts are back in the partners' balances and are paid by the next run.</p>
          <ul class="rows failures">
            {failed.map((p) => (
              <li key={p.id} data-payout={p.id}>
                <span>
                  <a href={partnerHref(p.partnerId, program.id)}>{p.partnerName}</a>
                  {`: ${cash(p.amountCents)} by ${methodInSentence(p.method)}`}
                </span>
                <span class="bad">{failureText(p)}</span>
              </li>
            ))}
          </ul>
        </section>
      )}

      {r.skipped.length > 0 && (
        <section aria-labelledby="run-skipped-title">
          <h2 id="run-skipped-title">Skipped partners</h2>
          <p class="muted">Not paid by this run; they stay payable.</p>
          <SkippedTable skipped={r.skipped} currency={r.currency} caption="Partners the run skipped" />
        </section>
      )}

      <section aria-labelledby="run-payouts-title">
        <h2 id="run-payouts-title" tabIndex={-1} class="focus-target">
          Payouts
        </h2>
        <div class="table-wrap">
          <table id="run-payouts" aria-busy={run.loading}>
            <caption class="visually-hidden">The run's payouts</caption>
            <thead>
              <tr>
                <th scope="col">Payout</th>
                <th scope="col">Partner</th>
                <th scope="col">Method</th>
                <th scope="col" class="num">
                  Amount
                </th>
                <th scope="col">State</th>
                <th scope="col">Details</th>
                {mayPay && <th scope="col">Action</th>}
              </tr>
            </thead>
            <tbody>
              {r.payouts.map((p) => (
                <tr key={p.id} data-payout={p.id}>
                  <td>#{p.id}</td>
                  <th scope="row">
                    <a href={partnerHref(p.partnerId, program.id)}>{p.partnerName}</a>
                  </th>
                  <td>{methodText(p.method)}</td>
                  <td class="num">{cash(p.amountCents)}</td>
                  <td class="state">{PAYOUT_STATE_TEXT[p.status] ?? p.status}</td>
                  <td class="details">{details(p)}</td>
                  {mayPay && (
                    <td>
                      {awaitsMarking(p) &&
                        (failing === p.id ? (
                          <FailForm
                            payout={p}
                            busy={busy}
                            onSubmit={(reason) => void markFailed(p, reason)}
                            onCancel={() => {
                              setFailing(null);
                              requestAnimationFrame(() => document.getElementById(`fail-${p.id}`)?.focus());
                            }}
                          />
                        ) : (
                          <span class="actions">
                            <button type="button" disabled={busy} onClick={() => void markPaid(p)} aria-label={`Mark payout #${p.id} paid`}>
                              Mark paid
                            </button>
                            <button type="button" class="secondary" id={`fail-${p.id}`} onClick={() => setFailing(p.id)} aria-label={`Mark payout #${p.id} failed`}>
                              Mark failed
                            </button>
                          </span>
                        ))}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {r.payouts.length === 0 && <p class="muted">This run paid nobody.</p>}
      </section>
    </Screen>
  );
}

/** What else there is to know about a payout: when it was paid (and the Stripe transfer), or why it failed. */
function details(p: RunPayout): string {
  if (p.status === "paid") return `Paid ${dateTime(p.paidAt)}${p.transferId ? ` (transfer ${p.transferId})` : ""}`;
  if (p.status === "failed") return failureText(p);
  if (p.status === "processing") return p.method === "stripe" ? "Transfer requested" : "In the file: mark it paid once sent";
  if (p.status === "open" && p.method === "stripe") return "Transfer about to be requested";
  return "";
}

function BackLink() {
  const { program } = useConsole();
  return (
    <p>
      <a href={screenHref("/payouts", program.id)}>All payout runs</a>
    </p>
  );
}

function Figure({ name, label, value }: { name: string; label: string; value: string }) {
  return (
    <div class="figure" data-figure={name}>
      <span class="value">{value}</span>
      <span class="label">{label}</span>
    </div>
  );
}

/** "Mark failed": PayPal's or the bank's reason, required; Cancel puts the focus back on the row's button. */
function FailForm({ payout, busy, onSubmit, onCancel }: { payout: RunPayout; busy: boolean; onSubmit: (reason: string) => void; onCancel: () => void }) {
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const submit = (event: Event) => {
    event.preventDefault();
    const reason = String(new FormData(event.currentTarget as HTMLFormElement).get("reason") ?? "").trim();
    if (reason) onSubmit(reason);
  };
  return (
    <form class="fail-step" aria-label={`Mark payout #${payout.id} failed`} onSubmit={submit}>
      <div class="field">
        <label for={`fail-reason-${payout.id}`}>Why it failed</label>
        <input id={`fail-reason-${payout.id}`} ref={input} name="reason" required maxLength={500} placeholder="Account closed" />
      </div>
      <span class="actions">
        <button type="submit" disabled={busy}>
          Confirm failed
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </span>
    </form>
  );
}
