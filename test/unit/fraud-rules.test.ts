/** The fraud rules (shared/domain/fraud-rules.ts): per rule, it fires, it does not, its setting is respected; and off is off. */
import {
  DEFAULT_FRAUD_SETTINGS,
  evaluateFraudRules,
  fraudSettingsOf,
  rejectionForPartner,
  FRAUD_RULE_TEXT,
  FRAUD_RULES,
  type ConversionFacts,
  type FraudRule,
  type FraudSettings,
} from "../../shared/domain/fraud-rules";

const T = new Date("2026-11-27T12:00:00.000Z");
const later = (seconds: number) => new Date(T.getTime() + seconds * 1000);

/** Every rule on, with the defaults' settings. */
function allOn(over: Partial<FraudSettings> = {}): FraudSettings {
  const s = structuredClone(DEFAULT_FRAUD_SETTINGS) as FraudSettings;
  for (const rule of FRAUD_RULES) s[rule].enabled = true;
  return { ...s, ...over };
}

/** A sale with nothing suspicious: another person, a fresh address, an organic click a day before. */
const clean = (): ConversionFacts => ({
  kind: "sale",
  occurredAt: later(86_400),
  customerEmail: "buyer@example.com",
  customerEmailDisposable: false,
  addressHash: "hash-buyer",
  partner: { email: "partner@example.org", addressHashes: ["hash-partner"], payoutDetailsSharedWith: [], last30Days: { sales: 20, refundedSales: 2 } },
  click: { at: T, referrerDomain: "blog.example.net", paid: false, adNetworks: [], utmMedium: "social" },
  sameAddressToday: 0,
});

const rulesOf = (settings: FraudSettings, facts: ConversionFacts) => evaluateFraudRules(settings, facts).map((f) => f.rule);
const fires = (rule: FraudRule, facts: ConversionFacts, settings = allOn()) => expect(rulesOf(settings, facts)).toEqual([rule]);
const silent = (facts: ConversionFacts, settings = allOn()) => expect(rulesOf(settings, facts)).toEqual([]);

test("a clean conversion raises nothing, with every rule on", () => silent(clean()));

test("partner_identity: the partner's own email (any case) or address hash of the day", () => {
  fires("partner_identity", { ...clean(), customerEmail: " Partner@Example.ORG " });
  fires("partner_identity", { ...clean(), addressHash: "hash-partner" });
  expect(evaluateFraudRules(allOn(), { ...clean(), addressHash: "hash-partner" })[0].evidence).toEqual({ sameEmail: false, sameAddress: true });
  silent({ ...clean(), customerEmail: null, addressHash: null });
});

test("disposable_email: the list said so", () => {
  fires("disposable_email", { ...clean(), customerEmail: "x@mailinator.com", customerEmailDisposable: true });
  expect(evaluateFraudRules(allOn(), { ...clean(), customerEmail: "x@Mailinator.com", customerEmailDisposable: true })[0].evidence).toEqual({ domain: "mailinator.com" });
  silent({ ...clean(), customerEmail: null, customerEmailDisposable: true });
});

test("shared_payout_details: another partner of the program has the same details", () => {
  const shared = clean();
  shared.partner.payoutDetailsSharedWith = [9, 4];
  fires("shared_payout_details", shared);
  expect(evaluateFraudRules(allOn(), shared)[0].evidence).toEqual({ sharedWithPartners: [4, 9] });
});

test("banned_referrer: the merchant's domains and their subdomains, nothing else", () => {
  const settings = allOn({ banned_referrer: { enabled: true, domains: ["coupons.example"] } });
  fires("banned_referrer", { ...clean(), click: { ...clean().click!, referrerDomain: "deals.coupons.example" } }, settings);
  fires("banned_referrer", { ...clean(), click: { ...clean().click!, referrerDomain: "coupons.example" } }, settings);
  silent({ ...clean(), click: { ...clean().click!, referrerDomain: "notcoupons.example" } }, settings);
  silent({ ...clean(), click: { ...clean().click!, referrerDomain: "deals.coupons.example" } }, allOn({ banned_referrer: { enabled: true, domains: [] } }));
});

test("paid_traffic: a click from a paid ad", () => {
  fires("paid_traffic", { ...clean(), click: { ...clean().click!, paid: true, adNetworks: ["google"], utmMedium: null } });
  silent({ ...clean(), click: null });
});

test("click_injection: a sale within the set seconds of its click; leads never", () => {
  const quick = { ...clean(), occurredAt: later(4) };
  fires("click_injection", quick);
  expect(evaluateFraudRules(allOn(), quick)[0].evidence).toEqual({ secondsAfterClick: 4, limitSeconds: 10 });
  silent(quick, allOn({ click_injection: { enabled: true, seconds: 3 } }));
  silent({ ...quick, kind: "lead" });
  silent({ ...clean(), occurredAt: later(10) });
});

test("address_velocity: more than the set number from one address in a day, this one counted", () => {
  fires("address_velocity", { ...clean(), sameAddressToday: 5 });
  expect(evaluateFraudRules(allOn(), { ...clean(), kind: "lead", sameAddressToday: 5 })[0].evidence).toEqual({ leadsToday: 6, limitPerDay: 5 });
  silent({ ...clean(), sameAddressToday: 4 });
  fires("address_velocity", { ...clean(), sameAddressToday: 1 }, allOn({ address_velocity: { enabled: true, perDay: 1 } }));
  silent({ ...clean(), addressHash: null, sameAddressToday: 50 });
});

test("refund_rate: above the set percent of 30 days' sales, once there are enough sales", () => {
  const rate = (sales: number, refundedSales: number, settings = allOn()) => {
    const facts = clean();
    facts.partner.last30Days = { sales, refundedSales };
    return rulesOf(settings, facts);
  };
  expect(rate(10, 4)).toEqual(["refund_rate"]);
  expect(rate(10, 3)).toEqual([]); // exactly 30 %: not above
  expect(rate(4, 4)).toEqual([]); // fewer than minSales
  expect(rate(10, 4, allOn({ refund_rate: { enabled: true, percent: 50, minSales: 5 } }))).toEqual([]);
  expect(rate(2, 1, allOn({ refund_rate: { enabled: true, percent: 30, minSales: 2 } }))).toEqual(["refund_rate"]);
});

test("a rule that is off never fires; several that are on all report, in order", () => {
  const bad: ConversionFacts = { ...clean(), occurredAt: later(2), customerEmail: "partner@example.org", click: { ...clean().click!, at: T, paid: true } };
  expect(rulesOf(allOn(), bad)).toEqual(["partner_identity", "paid_traffic", "click_injection"]);
  const off = allOn();
  for (const rule of FRAUD_RULES) off[rule].enabled = false;
  expect(rulesOf(off, bad)).toEqual([]);
  // The defaults: every rule off (a new program holds nothing until the merchant turns rules on).
  expect(rulesOf(structuredClone(DEFAULT_FRAUD_SETTINGS) as FraudSettings, bad)).toEqual([]);
});

test("stored settings: each rule given whole over its defaults; the partner's words of a rejection never carry a threshold", () => {
  const settings = fraudSettingsOf({ click_injection: { enabled: true, seconds: 30 } });
  expect(settings.click_injection).toEqual({ enabled: true, seconds: 30 });
  expect(settings.refund_rate).toEqual(DEFAULT_FRAUD_SETTINGS.refund_rate);
  expect(fraudSettingsOf(null)).toEqual(DEFAULT_FRAUD_SETTINGS);
  const words = rejectionForPartner([{ rule: "click_injection", evidence: { secondsAfterClick: 2, limitSeconds: 30 } }], "Ask us if unsure.");
  expect(words).toBe(`Rejected after review. ${FRAUD_RULE_TEXT.click_injection.partner} Ask us if unsure.`);
  expect(words).not.toMatch(/\d/);
});

test("every rule has words for the merchant and, without its internals, for the partner", () => {
  for (const rule of FRAUD_RULES) {
    expect(FRAUD_RULE_TEXT[rule].merchant.length).toBeGreaterThan(10);
    expect(FRAUD_RULE_TEXT[rule].partner).not.toMatch(/\d|hash|rule|threshold/i);
  }
});
