/**
 * Partners: the applications waiting for a decision (approve into a group, or decline with a message), then everyone
 * enrolled in the program with their all-time totals; search, status filter, approve or decline, CSV.
 */
import { Fragment, type ComponentChildren } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { count, dateTime, day, money } from "../../lib/format";
import { Alert, FilterForm, Field, PagedTable, Pager, SelectField, StatusLine, useAsync, useCursorPages } from "../../lib/ui";
import { partnerLabel } from "../partner-filter";
import { Screen } from "../screen";
import { partnerHref, screenHref, useConsole } from "../session";

export interface PartnerTotals {
  clicks: number;
  leads: number;
  sales: number;
  revenueCents: number;
  commissions: number;
  pendingCents: number;
  creditedCents: number;
  paidCents: number;
  reversedCents: number;
  balanceCents: number;
}

export interface PartnerRow {
  partnerId: number;
  name: string;
  email: string | null;
  status: "approved" | "pending" | "declined";
  referralCode: string;
  enrolledAt: string;
  totals: PartnerTotals;
}

export const STATUS_TEXT: Record<PartnerRow["status"], string> = { approved: "Approved", pending: "Waiting for approval", declined: "Declined" };

/** Approve or decline buttons for a partner whose status allows it; `done` runs after the change with a sentence saying what happened. */
export function DecisionButtons({ partner, done }: { partner: Pick<PartnerRow, "partnerId" | "name" | "email" | "status">; done: (said: string) => void }) {
  const { programPath } = useConsole();
  const decide = async (decision: "approve" | "decline") => {
    try {
      await api("POST", programPath(`/partners/${partner.partnerId}/${decision}`));
      done(`${partnerLabel(partner)} ${decision === "approve" ? "approved" : "declined"}.`);
    } catch (e) {
      done(errorMessage(e));
    }
  };
  const who = partnerLabel(partner);
  return (
    <span class="actions">
      {partner.status !== "approved" && (
        <button type="button" onClick={() => decide("approve")} aria-label={`Approve ${who}`}>
          Approve
        </button>
      )}{" "}
      {partner.status !== "declined" && (
        <button type="button" class="secondary" onClick={() => decide("decline")} aria-label={`Decline ${who}`}>
          Decline
        </button>
      )}
    </span>
  );
}

export function Partners() {
  const { program, settings, programPath, can } = useConsole();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [said, setSaid] = useState("");
  const [round, setRound] = useState(0);
  const currency = settings.currency;
  return (
    <Screen title="Partners">
      <Applications round={round} done={(text) => (setSaid(text), setRound((n) => n + 1))} />
      <FilterForm label="Find partners" onApply={setFilters}>
        <Field label="Search (name, email or code)" name="q" type="search" />
        <SelectField
          label="Status"
          name="status"
          options={[
            ["", "Every status"],
            ["pending", "Waiting for approval"],
            ["approved", "Approved"],
            ["declined", "Declined"],
          ]}
        />
      </FilterForm>
      <StatusLine text={said} />
      <section aria-label="Partners">
        <PagedTable<PartnerRow>
          caption="Partners"
          path={programPath("/partners")}
          csvPath={programPath("/partners.csv")}
          filters={filters}
          reloadKey={round}
          rowKey={(p) => p.partnerId}
          empty="No partner matches."
          columns={[
            {
              header: "Partner",
              cell: (p) => (
                <>
                  <a href={partnerHref(p.partnerId, program.id)}>{partnerLabel(p)}</a>
                  {p.email && p.name && <div class="muted">{p.email}</div>}
                </>
              ),
            },
            { header: "Code", cell: (p) => <code>{p.referralCode}</code> },
            { header: "Status", cell: (p) => STATUS_TEXT[p.status] },
            { header: "Enrolled", cell: (p) => day(p.enrolledAt) },
            { header: "Clicks", numeric: true, cell: (p) => count(p.totals.clicks) },
            { header: "Sales", numeric: true, cell: (p) => count(p.totals.sales) },
            { header: "Revenue", numeric: true, cell: (p) => money(p.totals.revenueCents, currency) },
            { header: "Balance", numeric: true, cell: (p) => money(p.totals.balanceCents, currency) },
            ...(can("programs:write") ? [{ header: "Decision", cell: (p: PartnerRow) => <DecisionButtons partner={p} done={(text) => (setSaid(text), setRound((n) => n + 1))} /> }] : []),
          ]}
        />
      </section>
    </Screen>
  );
}

/** The longest message a decline may carry (services/programs). */
const DECLINE_MESSAGE_MAX = 1000;

/** An application to join the program (from the public application page). */
export interface Application {
  id: number;
  programId: number;
  partnerId: number | null;
  name: string;
  email: string;
  website: string | null;
  promotion: string;
  answers: Array<{ question: string; answer: string }>;
  status: "pending" | "approved" | "declined";
  declineMessage: string | null;
  groupId: number | null;
  createdAt: string;
  decidedAt: string | null;
}

export interface Group {
  id: number;
  name: string;
  isDefault: boolean;
}

/** A group's name in a picker; the default group says so (unless its name does). */
export const groupLabel = (g: Group): string => (g.isDefault && !/default/i.test(g.name) ? `${g.name} (default group)` : g.name);

/** The program's partner groups, the default group first (GET /rewards). */
export function useGroups(): ReturnType<typeof useAsync<Group[]>> {
  const { programPath } = useConsole();
  return useAsync(async () => {
    const { groups } = await api<{ groups: Group[] }>("GET", programPath("/rewards"));
    return [...groups].sort((a, b) => Number(b.isDefault) - Number(a.isDefault));
  }, [programPath("")]);
}

/** What an applicant sent: a website is a link only when it is http(s) (and then one search engines don't follow). */
function Website({ url }: { url: string | null }) {
  if (!url) return <>—</>;
  let href: string | null = null;
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") href = parsed.href;
  } catch {
    // Not a URL ("@someone", "my blog"): shown as text.
  }
  return href ? (
    <a href={href} rel="noopener noreferrer nofollow" class="address">
      {url}
    </a>
  ) : (
    <span class="address">{url}</span>
  );
}

/**
 * An application's facts and answers, as the applicant typed them (text only; line breaks kept). `facts` adds rows to
 * the facts; `withEmail` false leaves the email out (the partner's screen shows it already).
 */
export function ApplicationAnswers({ application: a, facts, withEmail = true }: { application: Application; facts?: ComponentChildren; withEmail?: boolean }) {
  return (
    <>
      <dl class="facts">
        {withEmail && (
          <>
            <dt>Email</dt>
            <dd class="address">{a.email}</dd>
          </>
        )}
        <dt>Website</dt>
        <dd>
          <Website url={a.website} />
        </dd>
        <dt>Applied on</dt>
        <dd>{dateTime(a.createdAt)}</dd>
        {facts}
      </dl>
      <dl class="answers">
        <dt>How they will promote you</dt>
        <dd>{a.promotion || "—"}</dd>
        {a.answers.map((qa, i) => (
          <Fragment key={i}>
            <dt>{qa.question}</dt>
            <dd>{qa.answer || "—"}</dd>
          </Fragment>
        ))}
      </dl>
    </>
  );
}

/** The pending applications, newest first, a card each; `done` says what a decision did and reloads the lists. */
function Applications({ round, done }: { round: number; done: (said: string) => void }) {
  const { program, settings, programPath, can } = useConsole();
  const writable = can("programs:write");
  const pages = useCursorPages<Application>(programPath("/applications"), { status: "pending" }, round, 10);
  const groups = useGroups();
  const heading = useRef<HTMLHeadingElement>(null);
  const list = pages.page.data?.data;
  // The last card of a later page was decided: show the page before it rather than an empty one.
  useEffect(() => {
    if (list && list.length === 0 && pages.pageNumber > 1) pages.previous();
  }, [list]);
  // The decided card leaves the list: the focus goes to the section's heading rather than being lost.
  const decided = (text: string) => {
    done(text);
    heading.current?.focus();
  };
  return (
    <section aria-labelledby="applications-title" class="applications">
      <h2 id="applications-title" ref={heading} tabIndex={-1} class="focus-target">
        Applications
      </h2>
      {pages.page.error && <Alert>{pages.page.error}</Alert>}
      {list && list.length === 0 && (
        <p class="muted">
          No application is waiting for a decision.{" "}
          {!settings.applications.open && (
            <>
              Applications are closed: open them in <a href={screenHref("/settings", program.id)}>Settings</a>.
            </>
          )}
        </p>
      )}
      {list && list.length > 0 && (
        <ul class="application-cards" aria-busy={pages.page.loading}>
          {list.map((a) => (
            <li key={a.id}>
              <ApplicationCard application={a} groups={groups.data} writable={writable} done={decided} />
            </li>
          ))}
        </ul>
      )}
      {(pages.pageNumber > 1 || pages.page.data?.nextCursor) && <Pager label="Applications" pages={pages} />}
    </section>
  );
}

function ApplicationCard({ application: a, groups, writable, done }: { application: Application; groups: Group[] | undefined; writable: boolean; done: (said: string) => void }) {
  const { programPath } = useConsole();
  const [groupId, setGroupId] = useState<string>("");
  const [declining, setDeclining] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const declineButton = useRef<HTMLButtonElement>(null);
  const chosen = groupId || String(groups?.[0]?.id ?? "");
  const titleId = `application-${a.id}-title`;

  const decide = async (decision: "approve" | "decline", body: Record<string, unknown>) => {
    setBusy(true);
    setError(null);
    try {
      const { application, changed } = await api<{ application: Application; changed: boolean }>("POST", programPath(`/applications/${a.id}/${decision}`), body);
      const group = groups?.find((g) => g.id === application.groupId);
      if (!changed) done(`${a.name}'s application was already ${application.status}.`);
      else if (decision === "approve") done(`${a.name} approved${group ? ` into ${group.name}` : ""}.`);
      else done(`${a.name}'s application declined.`);
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  };
  // The default group needs no groupId: approved partners stay in it.
  const approve = () => decide("approve", chosen && !groups?.find((g) => String(g.id) === chosen)?.isDefault ? { groupId: Number(chosen) } : {});
  const decline = (event: Event) => {
    event.preventDefault();
    const message = String(new FormData(event.currentTarget as HTMLFormElement).get("message") ?? "").trim();
    void decide("decline", message ? { message } : {});
  };
  const cancel = () => {
    setDeclining(false);
    // Back to the button that opened the step (it renders again after this update).
    setTimeout(() => declineButton.current?.focus());
  };

  return (
    <article class="application" aria-labelledby={titleId}>
      <h3 id={titleId}>{a.name}</h3>
      <ApplicationAnswers application={a} />
      {writable && (
        <div class="decision">
          {groups && groups.length > 0 && (
            <SelectField
              label="Group"
              aria-describedby={titleId}
              value={chosen}
              onChange={(e) => setGroupId((e.currentTarget as HTMLSelectElement).value)}
              options={groups.map((g) => [String(g.id), groupLabel(g)])}
            />
          )}
          <div class="actions wrap">
            <button type="button" onClick={approve} disabled={busy} aria-label={`Approve ${a.name}`}>
              Approve
            </button>
            {!declining && (
              <button type="button" class="secondary" ref={declineButton} onClick={() => setDeclining(true)} aria-label={`Decline ${a.name}`}>
                Decline…
              </button>
            )}
          </div>
        </div>
      )}
      {writable && declining && <DeclineStep name={a.name} busy={busy} onSubmit={decline} onCancel={cancel} />}
      {error && <Alert>{error}</Alert>}
    </article>
  );
}

/** Declining asks once more, with an optional message for the applicant; the focus goes to the message. */
function DeclineStep({ name, busy, onSubmit, onCancel }: { name: string; busy: boolean; onSubmit: (event: Event) => void; onCancel: () => void }) {
  const field = useRef<HTMLTextAreaElement>(null);
  const id = useId();
  useEffect(() => field.current?.focus(), []);
  return (
    <form class="decline-step" onSubmit={onSubmit} aria-label={`Decline ${name}'s application`}>
      <label for={id}>Message to {name} (optional)</label>
      <textarea id={id} name="message" rows={3} maxLength={DECLINE_MESSAGE_MAX} ref={field} aria-describedby={`${id}-hint`} />
      <p id={`${id}-hint`} class="hint muted">
        Included in the email that tells them (plain text, up to 1,000 characters). Leave it empty to decline without one.
      </p>
      <p class="actions wrap">
        <button type="submit" disabled={busy}>
          Confirm decline
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </p>
    </form>
  );
}
