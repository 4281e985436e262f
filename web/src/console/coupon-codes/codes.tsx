/**
 * A partner's coupon codes on their screen (docs/processor-webhooks.md, "Coupon codes"): each code with its source,
 * Stripe promotion code and when it was added; archive one (asked once more: the code stops attributing sales, its
 * Stripe promotion code stays as it is) and add one (./add-form.tsx). Changing needs programs:write.
 */
import { useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { dateTime } from "../../lib/format";
import { Alert, Confirm, LoadMore, StatusLine, Table, useMoreRows, type Column } from "../../lib/ui";
import { useConsole } from "../session";
import { AddCouponCode } from "./add-form";
import { SOURCE_TEXT, type CouponCode } from "./model";

export function CouponCodes({ partnerId, partnerName }: { partnerId: number; partnerName: string }) {
  const { programPath, can } = useConsole();
  const writable = can("programs:write");
  const [round, setRound] = useState(0);
  const [said, setSaid] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [archiving, setArchiving] = useState<CouponCode | null>(null);
  const [busy, setBusy] = useState(false);
  const codes = useMoreRows<CouponCode>(programPath("/coupon-codes"), { partnerId }, round, 50);

  const archive = async (c: CouponCode) => {
    setBusy(true);
    setError(null);
    try {
      const answer = await api<CouponCode & { message: string }>("DELETE", programPath(`/coupon-codes/${c.id}`));
      setSaid(answer.message);
      setArchiving(null);
      setRound((n) => n + 1);
      requestAnimationFrame(() => document.getElementById("partner-coupon-codes")?.focus());
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const columns: Array<Column<CouponCode>> = [
    { header: "Code", cell: (c) => <code>{c.code}</code> },
    { header: "Source", cell: (c) => SOURCE_TEXT[c.source] ?? c.source },
    { header: "Stripe promotion code", cell: (c) => (c.stripePromotionCodeId ? <code class="terms">{c.stripePromotionCodeId}</code> : "—") },
    { header: "Added", cell: (c) => dateTime(c.createdAt) },
    {
      header: "State",
      cell: (c) =>
        c.archivedAt ? (
          <span class="muted">Archived {dateTime(c.archivedAt)}</span>
        ) : writable ? (
          <span class="actions">
            <span class="ok">Live</span>
            <button type="button" class="secondary" id={`archive-code-${c.id}`} onClick={() => setArchiving(c)} aria-label={`Archive coupon code ${c.code}`}>
              Archive
            </button>
          </span>
        ) : (
          <span class="ok">Live</span>
        ),
    },
  ];

  return (
    <section aria-labelledby="partner-coupon-codes">
      <h2 id="partner-coupon-codes" tabIndex={-1} class="focus-target">
        Coupon codes
      </h2>
      <p class="muted">A sale carrying one of the partner's live codes is theirs when no click, email or customer already names a partner; the customer then stays theirs.</p>
      <StatusLine text={said} />
      {codes.error && <Alert>{codes.error}</Alert>}
      {codes.rows.length > 0 && <Table caption={`Coupon codes of ${partnerName}`} columns={columns} rows={codes.rows} rowKey={(c) => c.id} loading={codes.loading} />}
      {!codes.loading && !codes.error && codes.rows.length === 0 && <p class="muted">No coupon code yet.</p>}
      <LoadMore rows={codes} noun="code" afterId="partner-coupon-codes" />
      {archiving && (
        <Confirm
          key={archiving.id}
          question={`Archive coupon code ${archiving.code}?`}
          details={`It stops attributing sales at once; the sales it attributed and their customers stay ${partnerName}'s.${
            archiving.stripePromotionCodeId
              ? ` Its Stripe promotion code ${archiving.stripePromotionCodeId} stays active in Stripe: deactivate it there if customers should no longer get the discount.`
              : ""
          }`}
          confirmLabel={`Yes, archive ${archiving.code}`}
          busy={busy}
          onConfirm={() => void archive(archiving)}
          onCancel={() => {
            const id = archiving.id;
            setArchiving(null);
            requestAnimationFrame(() => document.getElementById(`archive-code-${id}`)?.focus());
          }}
        />
      )}
      {error && <Alert>{error}</Alert>}
      {writable && (
        <AddCouponCode
          partnerId={partnerId}
          added={(c) => {
            setSaid(`Coupon code ${c.code} added: sales carrying it are attributed to ${partnerName}.`);
            setRound((n) => n + 1);
          }}
        />
      )}
    </section>
  );
}
