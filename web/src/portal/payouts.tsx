/**
 * The portal's Payouts part (docs/partners.md): each payout of the program with its date, amount, method, state and,
 * for a failed one, the reason; "Show commissions" opens one with the commissions it pays
 * (GET /api/partner/programs/:programId/withdrawals/:withdrawalId); the statement (every payout's commissions) is a
 * CSV download. The first page arrives with the rest of the program (main.tsx); an opened payout stays open across
 * the page's refreshes.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { Page } from "../lib/api";
import { api } from "../lib/api";
import { day, money } from "../lib/format";
import { PagedList, programPath, Section, Table } from "./parts";
import type { PayoutDetail, PayoutMethod, Withdrawal } from "./types";

export const PAYOUT_STATE: Record<string, string> = {
  open: "Open: to be paid",
  processing: "On its way",
  paid: "Paid",
  failed: "Failed",
  cancelled: "Cancelled",
};

type Method = PayoutMethod | "account_credit" | "stripe_balance";
const METHOD: Record<Method, string> = { stripe: "Stripe", paypal: "PayPal", bank: "Bank transfer", account_credit: "Account credit", stripe_balance: "Account credit" };
const methodText = (m: Method | null | undefined): string => (m ? METHOD[m] : "By the merchant");
/** The method inside a sentence: "by bank transfer". */
const byMethod = (m: Method | null | undefined): string => (m === "bank" ? "by bank transfer" : m ? `by ${METHOD[m]}` : "by the merchant's own means");

/** A payout in one sentence, for its opened view. */
function sentence(w: Withdrawal): string {
  if (w.status === "paid") return `Paid${w.paidAt ? ` on ${day(w.paidAt)}` : ""} ${byMethod(w.method)}.`;
  if (w.status === "failed") return `Not paid ${byMethod(w.method)}${w.failureReason ? `: ${w.failureReason}` : ""}. The amount is back in your balance for the next payout.`;
  if (w.status === "processing") return `On its way ${byMethod(w.method)}${w.processingAt ? ` since ${day(w.processingAt)}` : ""}.`;
  if (w.status === "cancelled") return "Cancelled: refunds took back its whole amount before it was sent.";
  return `Open: to be paid ${byMethod(w.method)}.`;
}

/** What else a payout's row says: when it was paid or sent, or why it failed. */
function detailText(w: Withdrawal): string {
  if (w.status === "paid") return w.paidAt ? `Paid ${day(w.paidAt)}` : "Paid";
  if (w.status === "failed") return w.failureReason ? `Not paid: ${w.failureReason}` : "Not paid";
  if (w.status === "processing") return w.processingAt ? `Sent ${day(w.processingAt)}` : "";
  return "";
}

export function Payouts({ programId, first, onError }: { programId: number; first: Page<Withdrawal>; onError: (error: unknown) => void }) {
  const [open, setOpen] = useState<Withdrawal | null>(null);
  // Another program: nothing is open.
  useEffect(() => setOpen(null), [programId]);
  const close = () => {
    const id = open?.id;
    setOpen(null);
    requestAnimationFrame(() => document.getElementById(`payout-open-${id}`)?.focus());
  };
  return (
    <Section id="payouts" title="Payouts">
      <p class="actions wrap">
        <a class="button secondary" href={programPath(programId, "/statement.csv")} download>
          Download statement (CSV)
        </a>
        <span class="muted">Every payout with the commissions it paid.</span>
      </p>
      <PagedList programId={programId} list="withdrawals" first={first} empty="No payouts yet: the merchant pays your balance in payout runs." onError={onError}>
        {(rows: Withdrawal[]) => (
          <Table caption="Your payouts" headers={[["Date"], ["Amount", true], ["Method"], ["State"], ["Details"], ["Commissions"]]}>
            {rows.map((w) => (
              <tr key={w.id} data-payout={String(w.id)}>
                <td class="date">{day(w.createdAt)}</td>
                <td class="num">{money(w.amountCents, w.currency)}</td>
                <td>{methodText(w.method)}</td>
                <td class="status">{PAYOUT_STATE[w.status] ?? w.status}</td>
                <td class={w.status === "failed" ? "bad" : undefined}>{detailText(w)}</td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    id={`payout-open-${w.id}`}
                    aria-expanded={open?.id === w.id}
                    aria-controls="payout-detail"
                    aria-label={`Show commissions of the payout of ${money(w.amountCents, w.currency)} on ${day(w.createdAt)}`}
                    onClick={() => setOpen(w)}
                  >
                    Show commissions
                  </button>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </PagedList>
      {open && <OpenPayout key={open.id} programId={programId} payout={open} onClose={close} onError={onError} />}
    </Section>
  );
}

/** One payout with the commissions it pays; its heading takes the focus, Close gives it back to the row's button. */
function OpenPayout({ programId, payout, onClose, onError }: { programId: number; payout: Withdrawal; onClose: () => void; onError: (error: unknown) => void }) {
  const [detail, setDetail] = useState<PayoutDetail | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
    api<PayoutDetail>("GET", programPath(programId, `/withdrawals/${payout.id}`)).then(setDetail, onError);
  }, [programId, payout.id]);
  const p = detail ?? payout;
  return (
    <div id="payout-detail" class="preview-box payout-detail" role="region" aria-labelledby="payout-detail-title" aria-busy={!detail}>
      <h3 id="payout-detail-title" ref={heading} tabIndex={-1} class="focus-target">
        {`Payout of ${money(p.amountCents, p.currency)} on ${day(p.createdAt)}`}
      </h3>
      <p>{sentence(p)}</p>
      {!detail ? (
        <p class="muted">Loading…</p>
      ) : detail.commissions.length === 0 ? (
        <p class="muted">No commissions are left in this payout.</p>
      ) : (
        <Table caption="The commissions this payout pays" headers={[["Date"], ["Order"], ["Commission", true]]}>
          {detail.commissions.map((c) => (
            <tr key={c.id} data-commission={String(c.id)}>
              <td class="date">{day(c.createdAt)}</td>
              <td class="order">{c.kind === "lead" || !c.transactionId ? "A signup" : c.transactionId}</td>
              <td class="num">{money(c.netCents, detail.currency)}</td>
            </tr>
          ))}
        </Table>
      )}
      <p>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </p>
    </div>
  );
}
