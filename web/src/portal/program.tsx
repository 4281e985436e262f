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
import { t } from "../lib/i18n";
import type { MessageKey } from "../../../shared/i18n";
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
const COMMISSION_STATUS: Record<string, MessageKey> = {
  pending: "commission.status.pending",
  approved: "commission.status.approved",
  paid: "commission.status.paid",
  refunded: "commission.status.refunded",
  reversed: "commission.status.reversed",
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
        <h2 id="program-title">{t("program.none.title")}</h2>
        <p>{t("program.none.body")}</p>
      </section>
    );
  return (
    <section aria-labelledby="program-title">
      <h2 id="program-title">{program.name}</h2>
      <p>{t("program.notApproved", { status: t(program.status === "pending" ? "portal.status.pending" : "portal.status.declined") })}</p>
    </section>
  );
}

export function ProgramView({ program, lists, onError, onStatus }: { program: PortalProgram; lists: ProgramLists } & Actions) {
  const b = program.balance;
  const currency = program.currency;
  return (
    <>
      <LinkBuilder program={program} />
      <Section id="figures" title={t("figures.title", { program: program.name })}>
        <div class="grid">
          <Figure name="clicks" label={t("figures.clicks")} value={count(program.clicks ?? 0)} />
          <Figure name="pending" label={t("figures.pending")} value={money(b?.pendingCents ?? 0, currency)} />
          {b && b.heldForReviewCents > 0 && <Figure name="under-review" label={t("figures.underReview")} value={money(b.heldForReviewCents, currency)} />}
          <Figure name="balance" label={t("figures.balance")} value={money(b?.balanceCents ?? 0, currency)} />
          <Figure name="credited" label={t("figures.credited")} value={money(b?.creditedCents ?? 0, currency)} />
          <Figure name="paid" label={t("figures.paid")} value={money(b?.paidCents ?? 0, currency)} />
        </div>
        <p class="muted">{t("figures.note")}</p>
      </Section>
      <Stats programId={program.programId} first={lists.stats} onError={onError} />
      <Notices programId={program.programId} first={lists.notices} onError={onError} onStatus={onStatus} />
      <Section id="commissions" title={t("commissions.title")}>
        <PagedList programId={program.programId} list="commissions" first={lists.commissions} empty={t("commissions.empty")} onError={onError}>
          {(rows: Commission[]) => (
            <Table
              caption={t("commissions.caption")}
              headers={[
                [t("commissions.col.date")],
                [t("commissions.col.order")],
                [t("commissions.col.reward")],
                [t("commissions.col.sale"), true],
                [t("commissions.col.commission"), true],
                [t("commissions.col.refunds"), true],
                [t("commissions.col.now"), true],
                [t("commissions.col.status")],
              ]}
            >
              {rows.map((c) => (
                <tr key={c.id} data-commission={String(c.id)}>
                  <td class="date">{day(c.createdAt)}</td>
                  <td class="order">
                    {c.transactionId}
                    {c.refunds.length > 0 && (
                      <ul class="refunds">
                        {c.refunds.map((r) => (
                          <li key={r.id}>
                            {t("commissions.refundLine", {
                              kind: t(r.reasonCode === "chargeback" ? "commissions.refund.chargeback" : r.reasonCode === "void" ? "commissions.refund.void" : "commissions.refund.refund"),
                              amount: money(r.amountCents, c.saleOriginal?.currency ?? c.currency),
                              date: day(r.createdAt),
                              deduction: money(r.deductionCents, c.currency),
                            })}
                            {r.reason ? ` (${r.reason})` : ""}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  <td class="reward">{c.reward ?? ""}</td>
                  <td class="num">
                    {money(c.saleAmountCents, c.currency)}
                    {c.saleOriginal && <span class="paid"> {t("commissions.paidOriginal", { amount: money(c.saleOriginal.amountCents, c.saleOriginal.currency) })}</span>}
                  </td>
                  <td class="num">{money(c.amountCents, c.currency)}</td>
                  <td class="num">{c.deductedCents ? `−${money(c.deductedCents, c.currency)}` : ""}</td>
                  <td class="num net">{money(c.netCents, c.currency)}</td>
                  <td class="status">{COMMISSION_STATUS[c.status] ? t(COMMISSION_STATUS[c.status]) : c.status}</td>
                </tr>
              ))}
            </Table>
          )}
        </PagedList>
      </Section>
      <Section id="customers" title={t("customers.title")}>
        <p class="muted">{t("customers.masked")}</p>
        <PagedList programId={program.programId} list="customers" first={lists.customers} empty={t("customers.empty")} onError={onError}>
          {(rows: Customer[]) => (
            <Table caption={t("customers.caption")} headers={[[t("customers.col.signedUp")], [t("customers.col.customer")], [t("customers.col.email")]]}>
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
      onStatus(t("notices.marked"));
      // The button goes away with the notice's unread state: the focus moves to the list's heading, not to the page's start.
      heading.current?.focus();
    } catch (e) {
      onError(e);
    } finally {
      setPending(null);
    }
  };
  return (
    <Section id="notices" title={t("notices.title")} headingRef={heading}>
      <PagedList programId={programId} list="notices" first={first} empty={t("notices.empty")} onError={onError}>
        {(rows: Notice[]) => (
          <ul class="notices">
            {rows.map((n) => {
              const unread = !n.partnerReadAt && !read[n.id];
              const what = t("notices.line", {
                what: t(n.status === "reversed" ? "notices.reversed" : "notices.reduced"),
                order: n.transactionId,
                amount: money(n.deductionCents, n.currency),
                reason: n.reason ? ` (${n.reason})` : "",
                date: day(n.createdAt),
              });
              return (
                <li key={n.id} data-notice={String(n.id)} class={unread ? "unread" : undefined}>
                  <span>{unread ? t("notices.new", { what }) : what}</span>
                  {unread && (
                    <button type="button" class="secondary" aria-label={t("notices.markReadLabel", { order: n.transactionId })} disabled={pending === n.id} onClick={() => void markRead(n)}>
                      {t("notices.markRead")}
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
