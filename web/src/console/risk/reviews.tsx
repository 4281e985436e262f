/**
 * Risk, Reviews: the conversions the fraud rules held (GET /api/programs/:programId/fraud/reviews), newest first and
 * grouped per partner: the partner's name, how many, the rules that fired as chips, and each conversion with its
 * commission, the rules' descriptions and their evidence in words (never a raw address). Someone with
 * programs:write clears one (its commission proceeds, its hold counted from the decision), rejects one (voided; the
 * partner is told the rule's plain words and, optionally, a message) or bans the partner (declined, their
 * uncredited commissions voided, told the reason). The status filter shows the cleared and rejected ones.
 */
import { Fragment } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { count, dateTime, money } from "../../lib/format";
import { Alert, Field, FieldError, FilterForm, LoadMore, SelectField, useMoreRows } from "../../lib/ui";
import { partnerLabel, usePartnerFilter } from "../partner-filter";
import { partnerHref, useConsole } from "../session";
import { evidenceLabel, evidenceText, FRAUD_RULE_TEXT, REVIEW_STATE_TEXT, ruleName, type Decision, type EvidenceValue, type FraudRule, type Review, type ReviewState } from "./model";

/** The longest reason a rejection or a ban may carry (a ban's is the API's limit). */
const REASON_MAX = 1000;

/** What a commission's state means to a merchant (the Commissions screen's words, and a held one). */
const COMMISSION_STATE_TEXT: Record<string, string> = {
  pending: "Pending",
  held: "Held for review",
  on_hold: "Held for review",
  approved: "Credited",
  paid: "Paid",
  refunded: "Reduced by refunds",
  reversed: "Voided",
  voided: "Voided",
};

/** A conversion as a sentence names it: "the sale order-1001", "the signup of commission #7". */
export const conversionName = (r: Review): string =>
  r.kind === "sale" ? `sale ${r.commission.transactionId ?? `#${r.commissionId}`}` : r.commission.transactionId ? `signup ${r.commission.transactionId}` : `signup #${r.commissionId}`;

const capital = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** The partners of `rows` in the order of their newest review, each with their reviews. */
function byPartner(rows: Review[]): Array<{ partnerId: number; partnerName: string; reviews: Review[] }> {
  const groups = new Map<number, { partnerId: number; partnerName: string; reviews: Review[] }>();
  for (const r of rows) {
    const group = groups.get(r.partnerId) ?? { partnerId: r.partnerId, partnerName: partnerLabel({ partnerId: r.partnerId, name: r.partnerName }), reviews: [] };
    group.reviews.push(r);
    groups.set(r.partnerId, group);
  }
  return [...groups.values()];
}

/** The rules that fired on `reviews`, in the order they first appear, with how many conversions each flagged. */
function rulesFired(reviews: Review[]): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const r of reviews) for (const rule of new Set(r.flags.map((f) => f.rule))) counts.set(rule, (counts.get(rule) ?? 0) + 1);
  return [...counts.entries()];
}

export function Reviews({ say }: { say: (text: string) => void }) {
  const { programPath, can } = useConsole();
  const writable = can("programs:write");
  const partner = usePartnerFilter();
  const [status, setStatus] = useState<ReviewState>("pending");
  const [round, setRound] = useState(0);
  const rows = useMoreRows<Review>(programPath("/fraud/reviews"), { status, partnerId: partner.partnerId }, round, 50);
  const heading = useRef<HTMLHeadingElement>(null);
  const apply = async ({ partner: text, status: wanted }: Record<string, string>) => {
    await partner.resolve(text);
    setStatus((wanted as ReviewState) || "pending");
  };
  // A decided review leaves the list (or a banned partner's do): the focus goes to the list's heading rather than being lost.
  const done = (text: string) => {
    say(text);
    setRound((n) => n + 1);
    heading.current?.focus();
  };
  const groups = byPartner(rows.rows);
  return (
    <section aria-labelledby="reviews-title">
      <h2 id="reviews-title" ref={heading} tabIndex={-1} class="focus-target">
        Reviews
      </h2>
      <FilterForm label="Filter reviews" onApply={apply}>
        <Field label="Partner (name, email or code)" name="partner" type="search" />
        <SelectField label="State" name="status" options={Object.entries(REVIEW_STATE_TEXT)} />
      </FilterForm>
      {partner.view}
      {rows.error && <Alert>{rows.error}</Alert>}
      {!rows.loading && !rows.error && rows.rows.length === 0 && (
        <p class="muted">{status === "pending" ? "No conversion is waiting for review." : `No ${REVIEW_STATE_TEXT[status].toLowerCase()} conversion.`}</p>
      )}
      {groups.length > 0 && (
        <ul class="risk-partners" aria-busy={rows.loading}>
          {groups.map((g) => (
            <li key={g.partnerId}>
              <PartnerReviews {...g} status={status} writable={writable} done={done} />
            </li>
          ))}
        </ul>
      )}
      <LoadMore rows={rows} noun="review" afterId="reviews-title" />
    </section>
  );
}

function PartnerReviews({
  partnerId,
  partnerName,
  reviews,
  status,
  writable,
  done,
}: {
  partnerId: number;
  partnerName: string;
  reviews: Review[];
  status: ReviewState;
  writable: boolean;
  done: (said: string) => void;
}) {
  const { program } = useConsole();
  const titleId = `risk-partner-${partnerId}`;
  const n = reviews.length;
  const what = status === "pending" ? `waiting for review` : REVIEW_STATE_TEXT[status].toLowerCase();
  return (
    <article class="risk-partner" aria-labelledby={titleId}>
      <div class="risk-partner-head">
        <h3 id={titleId}>
          <a href={partnerHref(partnerId, program.id)}>{partnerName}</a>
        </h3>
        <p class="muted">{`${count(n)} ${n === 1 ? "conversion" : "conversions"} ${what}`}</p>
      </div>
      <ul class="chips" aria-label={`Rules fired for ${partnerName}`}>
        {rulesFired(reviews).map(([rule, times]) => (
          <li key={rule} class="chip">
            {ruleName(rule)}
            {times > 1 && <span class="chip-count">{` × ${count(times)}`}</span>}
          </li>
        ))}
      </ul>
      {writable && <BanPartner partnerId={partnerId} partnerName={partnerName} done={done} />}
      <ul class="review-cards">
        {reviews.map((r) => (
          <li key={r.id}>
            <ReviewCard review={r} partnerName={partnerName} writable={writable} done={done} />
          </li>
        ))}
      </ul>
    </article>
  );
}

/** One evidence fact: partners by their links, anything else as text. */
function EvidenceValueView({ name, value }: { name: string; value: EvidenceValue }) {
  const { program } = useConsole();
  if (name === "sharedWithPartners" && Array.isArray(value) && value.every((v) => typeof v === "number"))
    return (
      <>
        {(value as number[]).map((id, i) => (
          <Fragment key={id}>
            {i > 0 && ", "}
            <a href={partnerHref(id, program.id)}>Partner #{id}</a>
          </Fragment>
        ))}
      </>
    );
  return <>{evidenceText(value)}</>;
}

function ReviewCard({ review: r, partnerName, writable, done }: { review: Review; partnerName: string; writable: boolean; done: (said: string) => void }) {
  const { programPath } = useConsole();
  const [rejecting, setRejecting] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const rejectButton = useRef<HTMLButtonElement>(null);
  const titleId = `review-${r.id}-title`;
  const name = conversionName(r);
  const amount = money(r.commission.amountCents, r.commission.currency);
  // A ban (or a full refund) voids the commission and leaves the review pending: clearing it would release nothing.
  const voided = r.commission.status === "reversed";

  const decide = async (decision: "clear" | "reject", body?: Record<string, unknown>) => {
    setBusy(true);
    setError(null);
    try {
      const { review, changed } = await api<Decision>("POST", programPath(`/fraud/reviews/${r.id}/${decision}`), body);
      if (!changed) done(`${partnerName}'s ${name} was already ${review.status}.`);
      else if (decision === "clear") done(`${partnerName}'s ${name} cleared: the commission of ${amount} proceeds, its hold counted from now.`);
      else done(`${partnerName}'s ${name} rejected: the commission of ${amount} is voided and ${partnerName} is told why.`);
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  };
  const reject = (event: Event) => {
    event.preventDefault();
    const reason = String(new FormData(event.currentTarget as HTMLFormElement).get("reason") ?? "").trim();
    void decide("reject", reason ? { reason } : {});
  };
  const cancel = () => {
    setRejecting(false);
    setTimeout(() => rejectButton.current?.focus());
  };

  return (
    <article class="review" aria-labelledby={titleId}>
      <h4 id={titleId}>{capital(name)}</h4>
      <dl class="facts">
        <dt>Commission</dt>
        <dd>
          {amount}
          <span class="muted"> ({COMMISSION_STATE_TEXT[r.commission.status] ?? capital(r.commission.status.replace(/_/g, " "))})</span>
        </dd>
        <dt>Flagged</dt>
        <dd>{dateTime(r.createdAt)}</dd>
        {r.status !== "pending" && (
          <>
            <dt>{REVIEW_STATE_TEXT[r.status]}</dt>
            <dd>{dateTime(r.decidedAt)}</dd>
          </>
        )}
        {r.status === "rejected" && r.decisionReason && (
          <>
            <dt>The partner was told</dt>
            <dd class="pre-line">{r.decisionReason}</dd>
          </>
        )}
      </dl>
      <ul class="flags" aria-label={`Why the ${name} was held`}>
        {r.flags.map((f) => (
          <li key={f.rule}>
            <p>
              <strong>{ruleName(f.rule)}.</strong> {f.description}
            </p>
            {Object.keys(f.evidence).length > 0 && (
              <dl class="facts evidence">
                {Object.entries(f.evidence).map(([key, value]) => (
                  <Fragment key={key}>
                    <dt>{evidenceLabel(key)}</dt>
                    <dd>
                      <EvidenceValueView name={key} value={value} />
                    </dd>
                  </Fragment>
                ))}
              </dl>
            )}
          </li>
        ))}
      </ul>
      {r.status === "pending" && voided && <p class="muted">Its commission is voided already (the sale was refunded, or the commission voided): there is nothing to clear.</p>}
      {writable && r.status === "pending" && (
        <div class="actions wrap">
          {!voided && (
            <button type="button" disabled={busy} onClick={() => void decide("clear")} aria-label={`Clear the ${name}`}>
              Clear
            </button>
          )}
          {!rejecting && (
            <button type="button" class="secondary" ref={rejectButton} onClick={() => setRejecting(true)} aria-label={`Reject the ${name}…`}>
              Reject…
            </button>
          )}
        </div>
      )}
      {writable && rejecting && <RejectStep review={r} partnerName={partnerName} busy={busy} onSubmit={reject} onCancel={cancel} />}
      {error && <Alert>{error}</Alert>}
    </article>
  );
}

/** Rejecting asks once more, says what the partner will read, and takes an optional message; the focus goes to the message. */
function RejectStep({ review: r, partnerName, busy, onSubmit, onCancel }: { review: Review; partnerName: string; busy: boolean; onSubmit: (event: Event) => void; onCancel: () => void }) {
  const field = useRef<HTMLTextAreaElement>(null);
  const id = useId();
  useEffect(() => field.current?.focus(), []);
  const told = [...new Set(r.flags.map((f) => f.rule))].map((rule) => FRAUD_RULE_TEXT[rule as FraudRule]?.partner).filter(Boolean);
  return (
    <form class="decline-step" onSubmit={onSubmit} aria-label={`Reject the ${conversionName(r)}`}>
      <p>
        The commission is voided. {partnerName} is told: “{["Rejected after review.", ...told].join(" ")}”, then your message if you give one.
      </p>
      <label for={id}>Message to {partnerName} (optional)</label>
      <textarea id={id} name="reason" rows={3} maxLength={REASON_MAX} ref={field} aria-describedby={`${id}-hint`} />
      <p id={`${id}-hint`} class="hint muted">
        Plain text, up to 1,000 characters. Leave it empty to send none.
      </p>
      <p class="actions wrap">
        <button type="submit" disabled={busy}>
          Confirm reject
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </p>
    </form>
  );
}

/**
 * Ban partner…: asks once more with the reason (required; the partner is told), then POST /partners/:id/ban: the
 * partner is declined and every commission of theirs not yet credited is voided.
 */
function BanPartner({ partnerId, partnerName, done }: { partnerId: number; partnerName: string; done: (said: string) => void }) {
  const { programPath } = useConsole();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const field = useRef<HTMLTextAreaElement>(null);
  const id = useId();
  useEffect(() => {
    if (open) field.current?.focus();
  }, [open]);

  const ban = async (event: Event) => {
    event.preventDefault();
    const reason = String(new FormData(event.currentTarget as HTMLFormElement).get("reason") ?? "").trim();
    setMissing(!reason);
    if (!reason) return field.current?.focus();
    setBusy(true);
    setError(null);
    try {
      const result = await api<{ changed: boolean; voidedCommissions: number }>("POST", programPath(`/partners/${partnerId}/ban`), { reason });
      const voided = `${count(result.voidedCommissions)} ${result.voidedCommissions === 1 ? "commission" : "commissions"} voided`;
      setOpen(false);
      setBusy(false);
      done(result.changed ? `${partnerName} banned: ${voided}, and they are told why.` : `${partnerName} was banned already: ${voided}.`);
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  };
  const cancel = () => {
    setOpen(false);
    setMissing(false);
    setTimeout(() => button.current?.focus());
  };

  if (!open)
    return (
      <p>
        <button type="button" class="secondary" ref={button} onClick={() => setOpen(true)}>
          Ban {partnerName}…
        </button>
      </p>
    );
  return (
    <form class="decline-step ban-step" onSubmit={ban} aria-label={`Ban ${partnerName}`} noValidate>
      <p>
        <strong>Ban {partnerName}?</strong> They are declined in the program: their links stop at once, and every commission of theirs not yet credited is voided with the reason (credited
        ones stay theirs). They are emailed the reason. Approving them under Partners takes them back.
      </p>
      <label for={id}>Reason (the partner is told)</label>
      <textarea
        id={id}
        name="reason"
        rows={3}
        maxLength={REASON_MAX}
        ref={field}
        required
        aria-invalid={missing ? true : undefined}
        aria-describedby={missing ? `${id}-error` : undefined}
        onInput={() => setMissing(false)}
      />
      <FieldError id={`${id}-error`} error={missing ? "Give a reason: the partner is told it." : undefined} />
      <p class="actions wrap">
        <button type="submit" disabled={busy}>
          Confirm ban
        </button>
        <button type="button" class="secondary" onClick={cancel}>
          Cancel
        </button>
      </p>
      {error && <Alert>{error}</Alert>}
    </form>
  );
}
