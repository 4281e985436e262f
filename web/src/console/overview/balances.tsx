/**
 * Balances and withdrawals: the approved partners who have a balance, and the program's latest withdrawals. Someone
 * with payouts:write creates a withdrawal of a partner's balance and marks an open one paid.
 */
import { useState } from "preact/hooks";
import { api, errorMessage, type Page } from "../../lib/api";
import { day, money } from "../../lib/format";
import { Alert, useAsync } from "../../lib/ui";
import { PAYOUT_STATE_TEXT, type PayoutState } from "../payouts/model";
import { partnerHref, screenHref, useConsole } from "../session";
import { useFocusAfter } from "./focus";

interface PartnerBalance {
  partnerId: number;
  name: string;
  email: string | null;
  totals: { balanceCents: number };
}

interface Withdrawal {
  id: number;
  partnerId: number;
  currency: string;
  amountCents: number;
  status: PayoutState;
  createdAt: string;
}

const nameOf = (p: { partnerId: number; name: string; email: string | null }): string => p.name || p.email || `Partner #${p.partnerId}`;

/** A key for one press of "Create withdrawal": a retry of the same press cannot open a second withdrawal. */
function pressKey(partnerId: number): string {
  const random = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  return `console-${partnerId}-${random}`;
}

export function Balances({ say, reloadKey }: { say: (text: string) => void; reloadKey: unknown }) {
  const { program, settings, programPath, can } = useConsole();
  const mayPay = can("payouts:write");
  const lists = useAsync(async () => {
    const [approved, withdrawals, everyone] = await Promise.all([
      api<Page<PartnerBalance>>("GET", programPath("/partners?status=approved&limit=100")),
      api<Page<Withdrawal>>("GET", programPath("/withdrawals?limit=50")),
      api<Page<PartnerBalance>>("GET", programPath("/partners?limit=100")),
    ]);
    return {
      balances: approved.data.filter((p) => p.totals.balanceCents !== 0),
      withdrawals: withdrawals.data,
      names: new Map(everyone.data.map((p) => [p.partnerId, nameOf(p)])),
    };
  }, [program.id, reloadKey]);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const focusLater = useFocusAfter(lists.data);

  const createWithdrawal = async (partner: PartnerBalance) => {
    setBusy(`partner-${partner.partnerId}`);
    setError(null);
    try {
      const w = await api<Withdrawal>("POST", programPath(`/partners/${partner.partnerId}/withdrawals`), { idempotencyKey: pressKey(partner.partnerId) });
      say(`Withdrawal ${w.id} of ${money(w.amountCents, w.currency)} created for ${nameOf(partner)}.`);
      // The next step is paying it: its button takes the focus.
      focusLater(() => document.querySelector<HTMLElement>(`#withdrawals-table tr[data-withdrawal="${w.id}"] button`) ?? document.getElementById("balances-title"));
      lists.reload();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };

  const markPaid = async (w: Withdrawal) => {
    setBusy(`withdrawal-${w.id}`);
    setError(null);
    try {
      await api("POST", programPath(`/withdrawals/${w.id}/pay`));
      say(`Withdrawal ${w.id} marked paid.`);
      focusLater(() => document.getElementById("balances-title"));
      lists.reload();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };

  const data = lists.data;
  return (
    <section aria-labelledby="balances-title">
      <h2 id="balances-title" tabIndex={-1}>
        Balances and withdrawals
      </h2>
      {lists.error && <Alert>{lists.error}</Alert>}
      {error && <Alert>{error}</Alert>}
      {!data && !lists.error && <p class="muted">Loading…</p>}
      {data && (
        <>
          {data.balances.length > 0 ? (
            <div class="table-wrap">
              <table id="balances-table" aria-busy={lists.loading}>
                <caption class="visually-hidden">Partners with a balance</caption>
                <thead>
                  <tr>
                    <th scope="col">Partner</th>
                    <th scope="col" class="num">
                      Balance
                    </th>
                    {mayPay && <th scope="col">Action</th>}
                  </tr>
                </thead>
                <tbody>
                  {data.balances.map((p) => (
                    <tr key={p.partnerId} data-partner={p.partnerId}>
                      <th scope="row">
                        <a href={partnerHref(p.partnerId, program.id)}>{nameOf(p)}</a>
                      </th>
                      <td class="num">{money(p.totals.balanceCents, settings.currency)}</td>
                      {mayPay && (
                        <td>
                          {p.totals.balanceCents > 0 ? (
                            <button type="button" disabled={busy === `partner-${p.partnerId}`} onClick={() => createWithdrawal(p)} aria-label={`Create withdrawal for ${nameOf(p)}`}>
                              Create withdrawal
                            </button>
                          ) : (
                            // A negative balance: a refund after payout took back more than was left (see the notifications).
                            <span class="muted">Nothing to withdraw</span>
                          )}
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p id="balances-empty" class="muted">
              No partner has a balance.
            </p>
          )}
          <h3>Withdrawals</h3>
          {data.withdrawals.length > 0 ? (
            <div class="table-wrap">
              <table id="withdrawals-table" aria-busy={lists.loading}>
                <caption class="visually-hidden">The latest withdrawals</caption>
                <thead>
                  <tr>
                    <th scope="col">Withdrawal</th>
                    <th scope="col">Partner</th>
                    <th scope="col" class="num">
                      Amount
                    </th>
                    <th scope="col">State</th>
                    {mayPay && <th scope="col">Action</th>}
                  </tr>
                </thead>
                <tbody>
                  {data.withdrawals.map((w) => (
                    <tr key={w.id} data-withdrawal={w.id}>
                      <th scope="row">
                        #{w.id} · {day(w.createdAt)}
                      </th>
                      <td>
                        <a href={partnerHref(w.partnerId, program.id)}>{data.names.get(w.partnerId) ?? `Partner #${w.partnerId}`}</a>
                      </td>
                      <td class="num">{money(w.amountCents, w.currency)}</td>
                      <td class="state">{PAYOUT_STATE_TEXT[w.status] ?? w.status}</td>
                      {mayPay && (
                        <td>
                          {w.status === "open" && (
                            <button type="button" disabled={busy === `withdrawal-${w.id}`} onClick={() => markPaid(w)} aria-label={`Mark withdrawal ${w.id} paid`}>
                              Mark paid
                            </button>
                          )}
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p id="withdrawals-empty" class="muted">
              No withdrawal yet.
            </p>
          )}
          <p>
            <a href={screenHref("/payouts", program.id)}>Every payout, with filters and CSV</a>
          </p>
        </>
      )}
    </section>
  );
}
