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
import { t } from "../lib/i18n";
import type { MessageKey } from "../../../shared/i18n";
import { PagedList, programPath, Section, Table } from "./parts";
import type { PayoutDetail, PayoutMethod, Withdrawal } from "./types";

const PAYOUT_STATE: Record<string, MessageKey> = {
  open: "payout.state.open",
  processing: "payout.state.processing",
  paid: "payout.state.paid",
  failed: "payout.state.failed",
  cancelled: "payout.state.cancelled",
};
/** A payout's state in words ("On its way"); an unknown one as the API says it. */
export const payoutState = (status: string): string => (PAYOUT_STATE[status] ? t(PAYOUT_STATE[status]) : status);

/** Credit payouts (account credit, Stripe balance credit) read as one: credit on the user's account. */
type Method = PayoutMethod | "account_credit" | "stripe_balance";
const keyOf = (m: Method) => (m === "stripe_balance" ? "account_credit" : m);
const methodText = (m: Method | null | undefined): string => t(m ? `payout.method.${keyOf(m)}` : "payout.method.none");
/** The method inside a sentence: "by bank transfer". */
const byMethod = (m: Method | null | undefined): string => t(m ? `payout.by.${keyOf(m)}` : "payout.by.none");

/** A payout in one sentence, for its opened view. */
function sentence(w: Withdrawal): string {
  const method = byMethod(w.method);
  if (w.status === "paid") return w.paidAt ? t("payout.sentence.paidOn", { date: day(w.paidAt), method }) : t("payout.sentence.paid", { method });
  if (w.status === "failed") return t("payout.sentence.failed", { method, reason: w.failureReason ? `: ${w.failureReason}` : "" });
  if (w.status === "processing") return w.processingAt ? t("payout.sentence.processingSince", { method, date: day(w.processingAt) }) : t("payout.sentence.processing", { method });
  if (w.status === "cancelled") return t("payout.sentence.cancelled");
  return t("payout.sentence.open", { method });
}

/** What else a payout's row says: when it was paid or sent, or why it failed. */
function detailText(w: Withdrawal): string {
  if (w.status === "paid") return w.paidAt ? t("payout.detail.paidOn", { date: day(w.paidAt) }) : t("payout.detail.paid");
  if (w.status === "failed") return w.failureReason ? t("payout.detail.notPaidReason", { reason: w.failureReason }) : t("payout.detail.notPaid");
  if (w.status === "processing") return w.processingAt ? t("payout.detail.sent", { date: day(w.processingAt) }) : "";
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
    <Section id="payouts" title={t("payouts.title")}>
      <p class="actions wrap">
        <a class="button secondary" href={programPath(programId, "/statement.csv")} download>
          {t("payouts.statement")}
        </a>
        <span class="muted">{t("payouts.statementHint")}</span>
      </p>
      <PagedList programId={programId} list="withdrawals" first={first} empty={t("payouts.empty")} onError={onError}>
        {(rows: Withdrawal[]) => (
          <Table
            caption={t("payouts.caption")}
            headers={[
              [t("commissions.col.date")],
              [t("payouts.col.amount"), true],
              [t("payouts.col.method")],
              [t("payouts.col.state")],
              [t("payouts.col.details")],
              [t("payouts.col.commissions")],
            ]}
          >
            {rows.map((w) => (
              <tr key={w.id} data-payout={String(w.id)}>
                <td class="date">{day(w.createdAt)}</td>
                <td class="num">{money(w.amountCents, w.currency)}</td>
                <td>{methodText(w.method)}</td>
                <td class="status">{payoutState(w.status)}</td>
                <td class={w.status === "failed" ? "bad" : undefined}>{detailText(w)}</td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    id={`payout-open-${w.id}`}
                    aria-expanded={open?.id === w.id}
                    aria-controls="payout-detail"
                    aria-label={t("payouts.showLabel", { amount: money(w.amountCents, w.currency), date: day(w.createdAt) })}
                    onClick={() => setOpen(w)}
                  >
                    {t("payouts.show")}
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
        {t("payouts.detailTitle", { amount: money(p.amountCents, p.currency), date: day(p.createdAt) })}
      </h3>
      <p>{sentence(p)}</p>
      {!detail ? (
        <p class="muted">{t("portal.loading")}</p>
      ) : detail.commissions.length === 0 ? (
        <p class="muted">{t("payouts.noneLeft")}</p>
      ) : (
        <Table caption={t("payouts.detailCaption")} headers={[[t("commissions.col.date")], [t("commissions.col.order")], [t("commissions.col.commission"), true]]}>
          {detail.commissions.map((c) => (
            <tr key={c.id} data-commission={String(c.id)}>
              <td class="date">{day(c.createdAt)}</td>
              <td class="order">{c.kind === "lead" || !c.transactionId ? t("payouts.signup") : c.transactionId}</td>
              <td class="num">{money(c.netCents, detail.currency)}</td>
            </tr>
          ))}
        </Table>
      )}
      <p>
        <button type="button" class="secondary" onClick={onClose}>
          {t("payouts.close")}
        </button>
      </p>
    </div>
  );
}
