/**
 * What the fraud check gathers for each rule that is on (services/commissions/fraud-check.ts), with its sources as
 * plain functions: every rule fires from the facts its source gives, and the click's day (not the sale's) picks the
 * partner's address hashes (the click's hash is of its day).
 */
import { checkConversion, type ConversionToCheck, type FraudFactSources } from "../../services/commissions/fraud-check";
import { DEFAULT_FRAUD_SETTINGS, FRAUD_RULES, type FraudSettings } from "../../shared/domain/fraud-rules";
import type { ClickFacts } from "../../services/attribution/contract";

const CLICK: ClickFacts = {
  at: "2026-11-27T23:59:58.000Z",
  referrerDomain: "coupons.spam.example",
  paid: true,
  adNetworks: ["google"],
  utmMedium: "cpc",
  addressHash: "hash-of-the-27th",
};

const conversion: ConversionToCheck = {
  programId: 1,
  partnerId: 7,
  kind: "sale",
  occurredAt: new Date("2026-11-28T00:00:01.000Z"),
  customerEmail: "buyer@mailinator.com",
  clickId: "clk_1",
};

function allOn(): FraudSettings {
  const s = structuredClone(DEFAULT_FRAUD_SETTINGS) as FraudSettings;
  for (const rule of FRAUD_RULES) s[rule].enabled = true;
  s.banned_referrer.domains = ["spam.example"];
  s.address_velocity.perDay = 2;
  return s;
}

function sources(calls: string[]): FraudFactSources {
  return {
    repo: {
      countConversionsFromAddress: async (_programId, kind, hash, from, to) => {
        calls.push(`count ${kind} ${hash} ${from.toISOString().slice(0, 10)}..${to.toISOString().slice(0, 10)}`);
        return 2;
      },
      partnerRefundStats: async () => {
        calls.push("refunds");
        return { sales: 10, refundedSales: 5 };
      },
    },
    clickFacts: async (_programId, clickId) => {
      calls.push(`click ${clickId}`);
      return CLICK;
    },
    partnerFacts: async () => {
      calls.push("partner");
      return { email: "partner@example.org", payoutDetailsSharedWith: [9] };
    },
    partnerAddressHashes: async (_partnerId, day) => {
      calls.push(`partner addresses ${day}`);
      return ["hash-of-the-27th"];
    },
  };
}

test("every rule fires from the facts its source gives; the click's day picks the partner's addresses, the conversion's day the count of the address's conversions", async () => {
  const calls: string[] = [];
  const check = await checkConversion(sources(calls), allOn(), conversion);
  expect(check.addressHash).toBe("hash-of-the-27th");
  expect(check.flags.map((f) => f.rule)).toEqual([...FRAUD_RULES]);
  expect(check.flags.find((f) => f.rule === "partner_identity")!.evidence).toEqual({ sameEmail: false, sameAddress: true });
  expect(calls).toEqual(expect.arrayContaining(["click clk_1", "partner", "partner addresses 2026-11-27", "refunds", "count sale hash-of-the-27th 2026-11-28..2026-11-29"]));
});

test("with every rule off nothing is asked but the click; a conversion without a click asks for no click", async () => {
  const calls: string[] = [];
  const off = structuredClone(DEFAULT_FRAUD_SETTINGS) as FraudSettings;
  expect(await checkConversion(sources(calls), off, conversion)).toEqual({ flags: [], addressHash: "hash-of-the-27th" });
  expect(calls).toEqual(["click clk_1"]);
  const none: string[] = [];
  const check = await checkConversion(sources(none), allOn(), { ...conversion, clickId: null, customerEmail: null });
  expect(none).not.toContain("click clk_1");
  expect(check.flags.map((f) => f.rule)).toEqual(["shared_payout_details", "refund_rate"]);
});
