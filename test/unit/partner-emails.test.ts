/**
 * The rules of partner emails (services/notifications/partner-emails.ts): which can be unsubscribed, when a
 * commission digest is due, a month's figures, and what each email says in its two parts.
 */
import fc from "fast-check";
import {
  categoryOf,
  digestDueAt,
  monthFigures,
  partnerEmailMessageId,
  PARTNER_EMAIL_KINDS,
  previousMonth,
  renderPartnerEmail,
  SIGN_IN_LINK,
  type EmailFacts,
} from "../../services/notifications/partner-emails";

const to = { partnerName: "Jane <b>Doe</b>", programName: "Acme & Co", portalUrl: "https://t.example/portal", unsubscribeUrl: "https://t.example/portal/unsubscribe?token=abc&x=1" };
const payout = { withdrawalId: 5, currency: "usd", amountCents: 12_345, runId: 2, method: "bank" as const, failureCode: "account_closed", failureReason: "The account is closed." };
const refund = { commissionId: 7, transactionId: "order-1", currency: "eur", amountCents: 2000, netCents: 1400, deductionCents: 600, reasonCode: "chargeback" as const, reason: "fraud" };
const EXAMPLES: Record<(typeof PARTNER_EMAIL_KINDS)[number], EmailFacts> = {
  application_received: { kind: "application_received" },
  application_approved: { kind: "application_approved" },
  application_declined: { kind: "application_declined", declineMessage: "Not a fit." },
  commission_digest: {
    kind: "commission_digest",
    frequency: "daily",
    lines: [
      { commissionId: 1, transactionId: "o-1", amountCents: 1000, currency: "usd" },
      { commissionId: 2, transactionId: "o-2", amountCents: 250, currency: "usd" },
    ],
  },
  commission_reduced: { kind: "commission_reduced", refund },
  commission_reversed: { kind: "commission_reversed", refund: { ...refund, netCents: 0, deductionCents: 2000, reasonCode: "refund", reason: null } },
  payout_paid: { kind: "payout_paid", payout },
  payout_failed: { kind: "payout_failed", payout: { ...payout, wasPaid: true } },
  monthly_summary: {
    kind: "monthly_summary",
    month: "2026-10",
    figures: [{ currency: "usd", earnedCount: 3, earnedCents: 4500, reducedCents: 500, paidOutCents: 2000 }],
    balance: { balanceCents: 2000, currency: "usd" },
  },
  partner_banned: { kind: "partner_banned", reason: "Incentivised traffic <b>against</b> the terms" },
};

describe("every kind", () => {
  test.each(PARTNER_EMAIL_KINDS)("%s: a one-line subject with the program, both parts with the greeting, the HTML escaped, the footer", (kind) => {
    const email = renderPartnerEmail(EXAMPLES[kind], to);
    expect(email.subject).toContain("Acme & Co");
    expect(email.subject).not.toMatch(/[\r\n]/);
    expect(email.text).toContain("Hello Jane <b>Doe</b>,");
    expect(email.html).toContain("Hello Jane &lt;b&gt;Doe&lt;/b&gt;,");
    expect(email.html).not.toContain("<b>");
    expect(email.html).toMatch(/^<!doctype html><html lang="en">/);
    if (categoryOf(kind)) {
      expect(email.text).toContain(`unsubscribe: ${to.unsubscribeUrl}`);
      expect(email.html).toContain('href="https://t.example/portal/unsubscribe?token=abc&amp;x=1"');
    } else {
      expect(email.text).toContain("cannot be unsubscribed");
      expect(email.text).not.toContain(to.unsubscribeUrl);
    }
  });

  test("a name with a line break never makes a second header line", () => {
    expect(renderPartnerEmail(EXAMPLES.payout_paid, { ...to, programName: "Acme\r\nBcc: x@evil.example" }).subject).toBe("Your payout of 123.45 USD from Acme Bcc: x@evil.example was sent");
  });
});

test("what the emails say", () => {
  expect(renderPartnerEmail(EXAMPLES.commission_digest, to)).toMatchObject({
    subject: "You earned 2 new commissions from Acme & Co",
    text: expect.stringContaining(
      "You earned 2 new commissions today in the Acme & Co partner program, 12.50 USD in all:\n\n- 10.00 USD for sale o-1 (commission 1)\n- 2.50 USD for sale o-2",
    ),
  });
  expect(renderPartnerEmail(EXAMPLES.commission_reduced, to).text).toContain("reduced by 6.00 EUR because of a chargeback (fraud). It is now 14.00 EUR of the 20.00 EUR earned.");
  expect(renderPartnerEmail(EXAMPLES.commission_reversed, to).subject).toBe("A commission from Acme & Co was reversed by a refund");
  expect(renderPartnerEmail(EXAMPLES.payout_failed, to).text).toContain("Reason: The account is closed. (account_closed)");
  expect(renderPartnerEmail(EXAMPLES.application_declined, to).text).toContain("A message from the Acme & Co team: Not a fit.");
  const summary = renderPartnerEmail(EXAMPLES.monthly_summary, to);
  expect(summary.subject).toBe("Your October 2026 with Acme & Co");
  expect(summary.text).toContain("- Earned: 45.00 USD (3 commissions)\n- Taken back by refunds and chargebacks: 5.00 USD\n- Paid out to you: 20.00 USD");
  expect(summary.text).toContain("Your balance now: 20.00 USD.");
  // The approval's sign-in link is made when it is sent: the stored email holds a placeholder, in both parts.
  const approved = renderPartnerEmail(EXAMPLES.application_approved, to);
  expect(approved.text).toContain(`Sign in to the partner portal: ${SIGN_IN_LINK}`);
  expect(approved.html).toContain(`href="${SIGN_IN_LINK}"`);
});

test("payout failures and a ban cannot be unsubscribed; every other kind has a category", () => {
  expect(PARTNER_EMAIL_KINDS.filter((k) => categoryOf(k) === null)).toEqual(["payout_failed", "partner_banned"]);
});

test("the Message-ID is the dedupe key's, the same on every call", () => {
  expect(partnerEmailMessageId("commission_digest.1.3.42", "https://track.example.com/x")).toBe("<commission_digest.1.3.42@track.example.com>");
  expect(partnerEmailMessageId("monthly_summary.1.3.2026-10", "http://localhost:3000")).toBe("<monthly_summary.1.3.2026-10@localhost>");
});

describe("digestDueAt", () => {
  const instant = fc.date({ min: new Date("2020-01-01T00:00:00Z"), max: new Date("2040-01-01T00:00:00Z"), noInvalidDate: true });

  test("each: at once; off: never", () => {
    const at = new Date("2026-11-26T13:00:00Z");
    expect(digestDueAt("each", at)).toEqual(at);
    expect(digestDueAt("off", at)).toBeNull();
  });

  test("daily: the next midnight UTC, so every commission of one day is in one digest", () => {
    fc.assert(
      fc.property(instant, (at) => {
        const due = digestDueAt("daily", at)!;
        expect(due.toISOString()).toMatch(/T00:00:00\.000Z$/);
        expect(due.getTime() - at.getTime()).toBeGreaterThan(0);
        expect(due.getTime() - at.getTime()).toBeLessThanOrEqual(86_400_000);
        expect(due.toISOString().slice(0, 10)).toBe(new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1)).toISOString().slice(0, 10));
      }),
    );
  });

  test("weekly: the next Monday midnight UTC, within a week", () => {
    fc.assert(
      fc.property(instant, (at) => {
        const due = digestDueAt("weekly", at)!;
        expect(due.getUTCDay()).toBe(1);
        expect(due.toISOString()).toMatch(/T00:00:00\.000Z$/);
        expect(due.getTime() - at.getTime()).toBeGreaterThan(0);
        expect(due.getTime() - at.getTime()).toBeLessThanOrEqual(7 * 86_400_000);
      }),
    );
    expect(digestDueAt("weekly", new Date("2026-11-29T23:59:59Z"))).toEqual(new Date("2026-11-30T00:00:00Z")); // a Sunday
    expect(digestDueAt("weekly", new Date("2026-11-30T00:00:00Z"))).toEqual(new Date("2026-12-07T00:00:00Z")); // a Monday
  });
});

test("previousMonth: the month a summary sent at an instant is about", () => {
  expect(previousMonth(new Date("2026-01-01T00:20:00Z"))).toBe("2025-12");
  expect(previousMonth(new Date("2026-03-31T23:59:59Z"))).toBe("2026-02");
});

test("monthFigures adds each currency's activity up to the cent", () => {
  const activity = fc.array(
    fc.record({
      kind: fc.constantFrom("earned" as const, "reduced" as const, "paid_out" as const),
      amountCents: fc.integer({ min: -10_000, max: 1_000_000 }),
      currency: fc.constantFrom("usd", "eur"),
    }),
  );
  fc.assert(
    fc.property(activity, (items) => {
      const figures = monthFigures(items);
      for (const f of figures) {
        const mine = items.filter((i) => i.currency === f.currency);
        const sum = (kind: string) => mine.filter((i) => i.kind === kind).reduce((s, i) => s + i.amountCents, 0);
        expect(f).toEqual({
          currency: f.currency,
          earnedCount: mine.filter((i) => i.kind === "earned").length,
          earnedCents: sum("earned"),
          reducedCents: sum("reduced"),
          paidOutCents: sum("paid_out"),
        });
      }
      expect(figures.map((f) => f.currency)).toEqual([...new Set(items.map((i) => i.currency))].sort());
    }),
  );
});
