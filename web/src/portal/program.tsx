/**
 * One program in the portal: the link builder (or the code), the figures (clicks, pending, balance, credited, paid out),
 * the activity over time (charts), the notices with "Mark read", the commissions with their reward and refunds, the
 * referred customers (masked by the API) and the withdrawals. The lists' first pages arrive loaded (main.tsx loads them with the partner, so a refresh swaps the whole
 * view at once); "Show more" fetches the next pages. Everything from the API is rendered as text.
 */
import type { ComponentChildren } from "preact";
import { useRef, useState } from "preact/hooks";
import { api, query, type Page } from "../lib/api";
import { count, day, money } from "../lib/format";
import { LinkBuilder } from "./link-builder";
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

const PAGE_SIZE = 25;

/** A commission's status in words (docs/partners.md). */
const COMMISSION_STATUS: Record<string, string> = {
  pending: "Pending: in the hold period",
  approved: "Approved: in your balance",
  paid: "Paid out",
  refunded: "Reduced by a refund",
  reversed: "Reversed: the sale was refunded",
};

const WITHDRAWAL_STATUS: Record<string, string> = { open: "Open: to be paid", paid: "Paid", cancelled: "Cancelled" };
export const programPath = (programId: number, rest: string): string => `/api/partner/programs/${programId}${rest}`;

const listPage = <T,>(programId: number, list: string, cursor?: string) => api<Page<T>>("GET", programPath(programId, `/${list}${query({ limit: PAGE_SIZE, cursor })}`));

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
                            {r.reasonCode === "chargeback" ? "Chargeback" : "Refund"} of {money(r.amountCents, c.currency)} on {day(r.createdAt)}: −{money(r.deductionCents, c.currency)}
                            {r.reason ? ` (${r.reason})` : ""}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  <td class="reward">{c.reward ?? ""}</td>
                  <td class="num">{money(c.saleAmountCents, c.currency)}</td>
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
      <Section id="withdrawals" title="Withdrawals">
        <PagedList programId={program.programId} list="withdrawals" first={lists.withdrawals} empty="No withdrawals yet." onError={onError}>
          {(rows: Withdrawal[]) => (
            <Table caption="Your withdrawals" headers={[["Requested"], ["Amount", true], ["Status"], ["Paid"]]}>
              {rows.map((w) => (
                <tr key={w.id}>
                  <td class="date">{day(w.createdAt)}</td>
                  <td class="num">{money(w.amountCents, w.currency)}</td>
                  <td class="status">{WITHDRAWAL_STATUS[w.status] ?? w.status}</td>
                  <td class="date">{w.paidAt ? day(w.paidAt) : ""}</td>
                </tr>
              ))}
            </Table>
          )}
        </PagedList>
      </Section>
    </>
  );
}

function Section({ id, title, children, headingRef }: { id: string; title: string; children: ComponentChildren; headingRef?: { current: HTMLHeadingElement | null } }) {
  return (
    <section id={id} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} ref={headingRef} tabIndex={headingRef ? -1 : undefined} class={headingRef ? "focus-target" : undefined}>
        {title}
      </h2>
      {children}
    </section>
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

function Table({ caption, headers, children }: { caption: string; headers: Array<[label: string, numeric?: boolean]>; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {headers.map(([label, numeric]) => (
              <th key={label} scope="col" class={numeric ? "num" : undefined}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * A list's rows: the first page as loaded, then "Show more" while there is a next cursor. When a refresh brings a new
 * first page, the pages shown after it are dropped.
 */
function PagedList<T>({
  programId,
  list,
  first,
  empty,
  onError,
  children,
}: {
  programId: number;
  list: string;
  first: Page<T>;
  empty: string;
  onError: (error: unknown) => void;
  children: (rows: T[]) => ComponentChildren;
}) {
  const [more, setMore] = useState<{ from: Page<T>; rows: T[]; cursor: string | null }>({ from: first, rows: [], cursor: first.nextCursor });
  const [busy, setBusy] = useState(false);
  const shown = more.from === first ? more : { from: first, rows: [], cursor: first.nextCursor };
  const rows = [...first.data, ...shown.rows];
  const showMore = async () => {
    if (!shown.cursor) return;
    setBusy(true);
    try {
      const page = await listPage<T>(programId, list, shown.cursor);
      setMore({ from: first, rows: [...shown.rows, ...page.data], cursor: page.nextCursor });
    } catch (e) {
      onError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      {rows.length === 0 ? <p class="muted">{empty}</p> : children(rows)}
      {shown.cursor && (
        <p>
          <button type="button" class="secondary" disabled={busy} onClick={showMore}>
            Show more
          </button>
        </p>
      )}
    </div>
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
