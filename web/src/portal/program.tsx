/**
 * One program in the portal: the link builder (or the code), the figures (clicks, pending, balance, credited, paid out),
 * the activity over time (charts), the notices with "Mark read", the commissions with their reward and refunds, the
 * referred customers (masked by the API) and the payouts (payouts.tsx). The lists' first pages arrive loaded (main.tsx
 * loads them with the partner, so a refresh swaps the whole view at once); "Show more" fetches the next pages.
 * Everything from the API is rendered as text.
 */
import { useRef, useState } from "preact/hooks";
import { api, type Page } from "../lib/api";
import { count, day, money } from "../lib/format";
import { LinkBuilder } from "./link-builder";
import { Figure, listPage, PagedList, programPath, Section, Table } from "./parts";
import { Payouts } from "./payouts";
import { Postbacks } from "./postbacks";
import { loadStats, Stats } from "./stats";
import type { Commission, Customer, Notice, PortalProgram, ProgramStats, Withdrawal } from "./types";

/** The first page of each list of an approved program. */
export interface ProgramLists {
  notices: Page<Notice>;
  commissions: Page<Commission>;
  customers: Page<Customer>;
  withdrawals: Page<Withdrawal>;
  /** The last 30 days, for the charts. */
  stats: ProgramStats;
}

/** A commission's status in words (docs/partners.md). */
const COMMISSION_STATUS: Record<string, string> = {
  pending: "Pending: in the hold period",
  approved: "Approved: in your balance",
  paid: "Paid out",
  refunded: "Reduced by a refund",
  reversed: "Reversed: the sale was refunded",
};

export async function loadLists(programId: number): Promise<ProgramLists> {
  const [notices, commissions, customers, withdrawals, stats] = await Promise.all([
    listPage<Notice>(programId, "notices"),
    listPage<Commission>(programId, "commissions"),
    listPage<Customer>(programId, "customers"),
    listPage<Withdrawal>(programId, "withdrawals"),
    loadStats(programId),
  ]);
  return { notices, commissions, customers, withdrawals, stats };
}

interface Actions {
  /** Something failed: the page shows why (a 401 already took the person back to the sign-in form). */
  onError: (error: unknown) => void;
  onStatus: (text: string) => void;
}

/** A program the partner is not approved in, or no program at all. */
export function NotApproved({ program }: { program?: PortalProgram }) {
  if (!program)
    return (
      <section aria-labelledby="program-title">
        <h2 id="program-title">No programs yet</h2>
        <p>You are not enrolled in any program yet.</p>
      </section>
    );
  return (
    <section aria-labelledby="program-title">
      <h2 id="program-title">{program.name}</h2>
      <p>Your enrollment is {program.status}. The merchant has to approve it before you can refer customers.</p>
    </section>
  );
}

export function ProgramView({ program, lists, onError, onStatus }: { program: PortalProgram; lists: ProgramLists } & Actions) {
  const b = program.balance;
  const currency = program.currency;
  return (
    <>
      <LinkBuilder program={program} />
      <Section id="figures" title={`${program.name} at a glance`}>
        <div class="grid">
          <Figure name="clicks" label="Clicks" value={count(program.clicks ?? 0)} />
          <Figure name="pending" label="Pending" value={money(b?.pendingCents ?? 0, currency)} />
          {b && b.heldForReviewCents > 0 && <Figure name="under-review" label="Of which under review" value={money(b.heldForReviewCents, currency)} />}
          <Figure name="balance" label="Balance" value={money(b?.balanceCents ?? 0, currency)} />
          <Figure name="credited" label="Credited" value={money(b?.creditedCents ?? 0, currency)} />
          <Figure name="paid" label="Paid out" value={money(b?.paidCents ?? 0, currency)} />
        </div>
        <p class="muted">Commissions count towards your balance once the merchant's hold period ends; refunds during it reduce them.</p>
      </Section>
      <Stats programId={program.programId} first={lists.stats} onError={onError} />
      <Notices programId={program.programId} first={lists.notices} onError={onError} onStatus={onStatus} />
      <Section id="commissions" title="Commissions">
        <PagedList
          programId={program.programId}
          list="commissions"
          first={lists.commissions}
          empty="No commissions yet: they appear here when a customer you referred buys."
          onError={onError}
        >
          {(rows: Commission[]) => (
            <Table caption="Your commissions" headers={[["Date"], ["Order"], ["Reward"], ["Sale", true], ["Commission", true], ["Refunds took", true], ["Now worth", true], ["Status"]]}>
              {rows.map((c) => (
                <tr key={c.id} data-commission={String(c.id)}>
                  <td class="date">{day(c.createdAt)}</td>
                  <td class="order">
                    {c.transactionId}
                    {c.refunds.length > 0 && (
                      <ul class="refunds">
                        {c.refunds.map((r) => (
                          <li key={r.id}>
                            {r.reasonCode === "chargeback" ? "Chargeback" : r.reasonCode === "void" ? "Voided" : "Refund"} of {money(r.amountCents, c.saleOriginal?.currency ?? c.currency)}{" "}
                            on {day(r.createdAt)}: −{money(r.deductionCents, c.currency)}
                            {r.reason ? ` (${r.reason})` : ""}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  <td class="reward">{c.reward ?? ""}</td>
                  <td class="num">
                    {money(c.saleAmountCents, c.currency)}
                    {c.saleOriginal && <span class="paid"> (paid {money(c.saleOriginal.amountCents, c.saleOriginal.currency)})</span>}
                  </td>
                  <td class="num">{money(c.amountCents, c.currency)}</td>
                  <td class="num">{c.deductedCents ? `−${money(c.deductedCents, c.currency)}` : ""}</td>
                  <td class="num net">{money(c.netCents, c.currency)}</td>
                  <td class="status">{COMMISSION_STATUS[c.status] ?? c.status}</td>
                </tr>
              ))}
            </Table>
          )}
        </PagedList>
      </Section>
      <Section id="customers" title="Referred customers">
        <p class="muted">Shown masked: the customers are the merchant's.</p>
        <PagedList programId={program.programId} list="customers" first={lists.customers} empty="No referred customers yet." onError={onError}>
          {(rows: Customer[]) => (
            <Table caption="Customers you referred" headers={[["Signed up"], ["Customer"], ["Email"]]}>
              {rows.map((c) => (
                <tr key={c.id}>
                  <td class="date">{day(c.createdAt)}</td>
                  <td>{c.customer}</td>
                  <td>{c.email ?? ""}</td>
                </tr>
              ))}
            </Table>
          )}
        </PagedList>
      </Section>
      <Payouts programId={program.programId} first={lists.withdrawals} onError={onError} />
      <Postbacks programId={program.programId} onError={onError} onStatus={onStatus} />
    </>
  );
}

/** The notices, newest first; an unread one says "New:" and has its own "Mark read" button. */
function Notices({ programId, first, onError, onStatus }: { programId: number; first: Page<Notice> } & Actions) {
  const [read, setRead] = useState<Record<number, boolean>>({});
  const [pending, setPending] = useState<number | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const markRead = async (n: Notice) => {
    setPending(n.id);
    try {
      await api("POST", programPath(programId, `/notices/${n.id}/read`));
      setRead((r) => ({ ...r, [n.id]: true }));
      onStatus("Notice marked read.");
      // The button goes away with the notice's unread state: the focus moves to the list's heading, not to the page's start.
      heading.current?.focus();
    } catch (e) {
      onError(e);
    } finally {
      setPending(null);
    }
  };
  return (
    <Section id="notices" title="Notices" headingRef={heading}>
      <PagedList programId={programId} list="notices" first={first} empty="No notices." onError={onError}>
        {(rows: Notice[]) => (
          <ul class="notices">
            {rows.map((n) => {
              const unread = !n.partnerReadAt && !read[n.id];
              const what = `${n.status === "reversed" ? "Commission reversed" : "Commission reduced"} for order ${n.transactionId}: −${money(n.deductionCents, n.currency)}${n.reason ? ` (${n.reason})` : ""}, ${day(n.createdAt)}`;
              return (
                <li key={n.id} data-notice={String(n.id)} class={unread ? "unread" : undefined}>
                  <span>{unread ? `New: ${what}` : what}</span>
                  {unread && (
                    <button type="button" class="secondary" aria-label={`Mark read: order ${n.transactionId}`} disabled={pending === n.id} onClick={() => void markRead(n)}>
                      Mark read
                    </button>
                  )}
                </li>
              );
            })}
          </ul>
        )}
      </PagedList>
    </Section>
  );
}
