/**
 * The event schemas (shared/events.ts): each example parses, each builder's
 * payload parses with its type's schema, and public ids never collide across
 * producers.
 */
import { EVENT_PRODUCERS, leadCreatedPayload, partnerEnrolledPayload, publicEventId, saleCreatedPayload, WEBHOOK_EVENT_TYPES, WEBHOOK_EVENTS } from "../../shared/events";

const t = new Date("2030-01-01T00:00:00.000Z");

test("every event type has a schema whose example it parses, with integer amounts", () => {
  expect(Object.keys(WEBHOOK_EVENTS)).toEqual([...WEBHOOK_EVENT_TYPES]);
  for (const [type, spec] of Object.entries(WEBHOOK_EVENTS)) {
    expect({ type, ok: spec.schema.safeParse(spec.example).success }).toEqual({ type, ok: true });
    for (const [field, value] of Object.entries(spec.example)) if (field.endsWith("Cents")) expect(Number.isInteger(value)).toBe(true);
  }
  // A fractional amount or a non-ISO time is refused.
  expect(WEBHOOK_EVENTS["sale.created"].schema.safeParse({ ...WEBHOOK_EVENTS["sale.created"].example, amountCents: 10.5 }).success).toBe(false);
  expect(WEBHOOK_EVENTS["withdrawal.paid"].schema.safeParse({ ...WEBHOOK_EVENTS["withdrawal.paid"].example, paidAt: "yesterday" }).success).toBe(false);
});

test("the producers' builders make payloads their schemas accept, without emails", () => {
  const lead = leadCreatedPayload({ id: 1, programId: 2, customerKey: "u1", partnerId: null, clickId: null, unattributedReason: "self_referral", isTest: true, timestamp: t, createdAt: t });
  expect(WEBHOOK_EVENTS["lead.created"].schema.parse(lead)).toEqual(lead);
  const sale = saleCreatedPayload({
    id: 3,
    programId: 2,
    transactionId: "o-1",
    amountCents: 4900,
    currency: "usd",
    conversion: { originalAmountCents: 4500, originalCurrency: "eur", rate: "1.0889", source: "ecb", rateDay: "2026-01-02" },
    customerKey: null,
    partnerId: null,
    clickId: null,
    attributionMethod: null,
    isTest: false,
    isRecurring: false,
    subscriptionId: null,
    commissionState: "none",
    noCommissionReason: null,
    occurredAt: t,
    createdAt: t,
  });
  expect(WEBHOOK_EVENTS["sale.created"].schema.parse(sale)).toMatchObject({ commissionDue: false, occurredAt: t.toISOString() });
  const enrolled = partnerEnrolledPayload({ id: 4, programId: 2, partnerId: 5, referralCode: "jane" }, "Jane", t);
  expect(WEBHOOK_EVENTS["partner.enrolled"].schema.parse(enrolled)).toEqual(enrolled);
  expect(JSON.stringify([lead, sale, enrolled])).not.toMatch(/@/);
});

test("public event ids: bare numbers for commissions (as before), prefixed for the other producers, never equal", () => {
  expect(publicEventId("commissions", 42)).toBe(42);
  const ids = EVENT_PRODUCERS.map((p) => String(publicEventId(p, 42)));
  expect(ids).toEqual(["42", "attribution:42", "sales:42", "programs:42"]);
  expect(new Set(ids).size).toBe(ids.length);
});
