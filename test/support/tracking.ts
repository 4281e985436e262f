import type { Bootstrap, TestSystem } from "./system";

let seq = 0;
export const uniqueId = (prefix: string) => `${prefix}-${process.pid}-${++seq}`;

/** Click -> lead -> sale through the public API; returns the sale response. */
export async function attributedSale(
  sys: TestSystem,
  boot: Bootstrap,
  opts: { transactionId?: string; amountCents?: number; testMode?: boolean; key?: string } = {},
): Promise<{ transactionId: string; body: any }> {
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
  expect(click.status).toBe(200);
  const customerKey = uniqueId("customer");
  const lead = await sys.http("POST", "/api/v1/track/lead", {
    key: opts.key ?? boot.apiKey,
    body: { customer_key: customerKey, click_id: click.body.click_id },
  });
  expect(lead.status).toBe(200);
  const transactionId = opts.transactionId ?? uniqueId("tx");
  const sale = await sys.http("POST", "/api/v1/track/sale", {
    key: opts.key ?? boot.apiKey,
    body: {
      transaction_id: transactionId,
      amount_cents: opts.amountCents ?? 10_000,
      customer_key: customerKey,
      ...(opts.testMode ? { additional_data: { test_mode: true } } : {}),
    },
  });
  expect(sale.status).toBe(200);
  return { transactionId, body: sale.body };
}

export function refund(sys: TestSystem, key: string, body: Record<string, unknown>) {
  return sys.http("POST", "/api/v1/track/refund", { key, body });
}
