/**
 * Partner emails through a real SMTP receiver (docs/partners.md, "Emails"): the program's settings, a commission
 * mailed at once or in a daily digest, refunds and chargebacks, the monthly summary, one-click unsubscribe honoured
 * at once, and the merchant's log with retries. Application and payout emails: test/http/applications.test.ts and
 * payout-email.test.ts; one email per event across a killed process: test/reliability/partner-email-crash.test.ts.
 */
import { simpleParser, type ParsedMail } from "mailparser";
import { startSmtpReceiver, type ReceivedMail, type SmtpReceiver } from "../support/smtp";
import { waitFor } from "../support/notifications";
import { ADMIN_TOKEN, startSystem, type TestSystem } from "../support/system";
import { digestDueAt } from "../../services/notifications/partner-emails";

let sys: TestSystem;
let smtp: SmtpReceiver;
let programId: number;
let apiKey: string;
const PUBLIC_URL = "https://track.example.test";

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  sys = await startSystem({
    env: {
      MAIL_URL: smtp.url,
      MAIL_FROM: "Partner mail <partners@example.test>",
      PUBLIC_URL,
      // Two attempts, then failed; the schedule runs only when a test asks (notifications.runEmailSchedule).
      PARTNER_EMAIL_MAX_ATTEMPTS: "2",
      PARTNER_EMAIL_SCHEDULE_MS: "3600000",
    },
  });
  const boot = await sys.bootstrap({ name: "Acme Shop", holdDays: 0, commissionRule: { type: "percentage", basisPoints: 1000 } });
  programId = boot.programId;
  apiKey = boot.apiKey;
});
afterAll(async () => {
  await sys?.stop();
  await smtp?.stop();
});

let seq = 0;
/** A partner with an email address, enrolled in the program. */
async function partner(name: string) {
  const email = `${name.toLowerCase()}-${process.pid}-${seq++}@example.com`;
  const { partner: p, enrollment } = await sys.admin("POST", `/programs/${programId}/partners`, { name, email });
  return { id: p.id as number, email, code: enrollment.referralCode as string };
}
/** A sale of `amountCents` through the partner's referral link (the program pays 10%). */
async function sale(p: { code: string }, amountCents = 10_000) {
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: p.code } });
  const customer = `c-${seq++}`;
  await sys.http("POST", "/api/v1/track/lead", { key: apiKey, body: { customer_key: customer, click_id: click.body.click_id } });
  const transactionId = `order-${process.pid}-${seq++}`;
  const res = await sys.http("POST", "/api/v1/track/sale", { key: apiKey, body: { transaction_id: transactionId, amount_cents: amountCents, customer_key: customer } });
  expect(res.status).toBe(200);
  return transactionId;
}
const settings = (body?: Record<string, unknown>) => sys.http(body ? "PUT" : "GET", `/api/admin/programs/${programId}/partner-email-settings`, { key: ADMIN_TOKEN, body });
/** The program's emails to the partner, newest first, as the merchant's log shows them. */
const emailsOf = async (partnerId: number): Promise<any[]> => (await sys.admin("GET", `/programs/${programId}/partner-emails?partnerId=${partnerId}&limit=100`)).data;
const emailOf = (partnerId: number, kind: string, ok: (e: any) => boolean = (e) => e.status !== "pending") =>
  waitFor(
    async () => (await emailsOf(partnerId)).find((e) => e.kind === kind),
    (e) => e !== undefined && ok(e),
  );
const parsed = async (partner: { email: string }, subject: string): Promise<ParsedMail & { raw: ReceivedMail }> => {
  const raw = await waitFor(
    async () => smtp.messages.find((m) => m.to.includes(partner.email) && m.raw.includes(subject)),
    (m) => m !== undefined,
  );
  return Object.assign(await simpleParser(raw!.raw), { raw: raw! });
};
/** A header's value as sent (one line). */
const header = (mail: ParsedMail, name: string) =>
  mail.headerLines
    .find((h) => h.key === name.toLowerCase())
    ?.line.replace(/^[^:]*:\s*/, "")
    .replace(/\r?\n\s+/g, " ");
/** The one-click unsubscribe URL of a mail (List-Unsubscribe: <url>). */
const unsubscribeUrlOf = (mail: ParsedMail) => /^<(.+)>$/.exec(header(mail, "List-Unsubscribe") ?? "")?.[1] ?? "";
const schedule = (at: Date) => sys.broker.call("notifications.runEmailSchedule", { at: at.toISOString() }) as Promise<{ digests: number; summaries: number }>;

test("settings: the defaults, a change keeps what it leaves out, bad input changes nothing", async () => {
  expect((await settings()).body).toEqual({ programId, replyTo: null, commissionEmails: "daily", monthlySummary: true, updatedAt: null });
  expect((await settings({ replyTo: "Partners@Acme.example", commissionEmails: "each" })).body).toMatchObject({
    replyTo: "partners@acme.example",
    commissionEmails: "each",
    monthlySummary: true,
  });
  expect((await settings({ monthlySummary: false })).body).toMatchObject({ replyTo: "partners@acme.example", commissionEmails: "each", monthlySummary: false });
  for (const bad of [{ replyTo: "not an address" }, { commissionEmails: "hourly" }, { monthlySummary: "yes" }, { sendAt: "9:00" }]) {
    const res = await settings(bad);
    expect({ bad, status: res.status, code: res.body.error?.code }).toEqual({ bad, status: 400, code: "invalid_request" });
  }
  expect((await settings()).body).toMatchObject({ replyTo: "partners@acme.example", commissionEmails: "each", monthlySummary: false });
  await settings({ monthlySummary: true });
});

test("a commission mailed at once: from the program, the merchant's reply-to, a text and an HTML part, one-click unsubscribe headers", async () => {
  await settings({ commissionEmails: "each", replyTo: "partners@acme.example" });
  const jane = await partner("Jane");
  const tx = await sale(jane, 12_345);
  const email = await emailOf(jane.id, "commission_digest");
  expect(email).toMatchObject({ status: "sent", category: "commissions", recipient: jane.email, fromName: "Acme Shop", replyTo: "partners@acme.example", attempts: 1 });
  expect(email).not.toHaveProperty("unsubscribeToken");
  const mail = await parsed(jane, "You earned 1 new commission from Acme Shop");
  expect(mail.from?.value).toEqual([{ name: "Acme Shop", address: "partners@example.test" }]);
  expect(mail.replyTo?.value).toEqual([{ name: "", address: "partners@acme.example" }]);
  expect(mail.messageId).toBe(email.messageId);
  expect(mail.text).toContain(`12.35 USD for sale ${tx}`); // 10% of 123.45, rounded once
  expect(mail.html).toContain(`12.35 USD for sale ${tx}`);
  expect(header(mail, "List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click");
  expect(unsubscribeUrlOf(mail)).toMatch(new RegExp(`^${PUBLIC_URL}/api/public/unsubscribe/[A-Za-z0-9_-]{32}$`));
});

test("in the partner's language: a partner who chose Spanish gets the commission email in Spanish, text, HTML and footer", async () => {
  await settings({ commissionEmails: "each" });
  const juana = await partner("Juana");
  await sys.broker.call("programs.updatePartnerProfile", { partnerId: juana.id, locale: "es" });
  const tx = await sale(juana, 10_000);
  const email = await emailOf(juana.id, "commission_digest");
  expect(email).toMatchObject({ status: "sent", subject: "Ha ganado 1 comisión nueva con Acme Shop" });
  const raw = await waitFor(
    async () => smtp.messages.find((m) => m.to.includes(juana.email)),
    (m) => m !== undefined,
  );
  const mail = await simpleParser(raw!.raw);
  expect(mail.subject).toBe("Ha ganado 1 comisión nueva con Acme Shop");
  expect(mail.text).toContain("Hola, Juana:");
  expect(mail.text).toContain(`10.00 USD por la venta ${tx}`);
  expect(mail.text).toContain("Recibe este correo como socio de Acme Shop. Para dejar de recibir correos sobre comisiones nuevas de Acme Shop, dese de baja:");
  expect(mail.html).toContain('<html lang="es">');
  // Without a choice: English, as before.
  await sys.broker.call("programs.updatePartnerProfile", { partnerId: juana.id, locale: null });
  await sale(juana, 10_000);
  await waitFor(
    async () => (await emailsOf(juana.id)).map((e) => e.subject),
    (subjects) => subjects.includes("You earned 1 new commission from Acme Shop"),
  );
});

test("daily: the day's commissions wait for one digest, collected once", async () => {
  await settings({ commissionEmails: "daily" });
  const jim = await partner("Jim");
  const [first, second] = [await sale(jim, 10_000), await sale(jim, 20_000)];
  await schedule(new Date()); // not due yet
  expect(await emailsOf(jim.id)).toEqual([]);
  const dueAt = digestDueAt("daily", new Date())!;
  const after = new Date(dueAt.getTime() + 2 * 60_000);
  expect((await schedule(after)).digests).toBeGreaterThanOrEqual(1);
  expect(await schedule(after)).toMatchObject({ digests: 0 });
  const email = await emailOf(jim.id, "commission_digest");
  expect((await emailsOf(jim.id)).map((e) => e.kind)).toEqual(["commission_digest"]);
  const mail = await parsed(jim, "You earned 2 new commissions from Acme Shop");
  expect(mail.messageId).toBe(email.messageId);
  expect(mail.text).toContain(`You earned 2 new commissions today in the Acme Shop partner program, 30.00 USD in all:`);
  expect(mail.text).toContain(`10.00 USD for sale ${first}`);
  expect(mail.text).toContain(`20.00 USD for sale ${second}`);
});

test("a refund reduces and the rest of it reverses the commission: the partner gets an email for each", async () => {
  await settings({ commissionEmails: "off" });
  const ann = await partner("Ann");
  const tx = await sale(ann, 10_000);
  const refund = (cents: number, reason: string) => sys.http("POST", "/api/v1/track/refund", { key: apiKey, body: { transaction_id: tx, refund_amount_cents: cents, reason } });
  expect((await refund(4_000, "refund")).status).toBe(200);
  expect(await emailOf(ann.id, "commission_reduced")).toMatchObject({ status: "sent", category: "refunds", subject: "A commission from Acme Shop was reduced by a refund" });
  expect((await parsed(ann, "was reduced by a refund")).text).toContain(
    `Your commission for sale ${tx} in the Acme Shop partner program was reduced by 4.00 USD because of a refund. It is now 6.00 USD of the 10.00 USD earned.`,
  );
  expect((await refund(6_000, "chargeback")).status).toBe(200);
  expect(await emailOf(ann.id, "commission_reversed")).toMatchObject({ status: "sent", subject: "A commission from Acme Shop was reversed by a chargeback" });
  // Commission emails are off for the program: no digest, the refunds still mail.
  expect((await emailsOf(ann.id)).map((e) => e.kind).sort()).toEqual(["commission_reduced", "commission_reversed"]);
});

test("one-click unsubscribe is honoured at once, for that category only, and can be undone", async () => {
  await settings({ commissionEmails: "each" });
  const bob = await partner("Bob");
  await sale(bob);
  const first = await parsed(bob, "You earned 1 new commission");
  const token = unsubscribeUrlOf(first).split("/").pop()!;
  // The page's question changes nothing; a mail client's one-click POST (a form body, RFC 8058) unsubscribes.
  expect((await sys.http("GET", `/api/public/unsubscribe/${token}`)).body).toEqual({
    programName: "Acme Shop",
    category: "commissions",
    categoryWords: "emails about new commissions",
    recipient: `b***@example.com`,
    unsubscribed: false,
  });
  // (PUBLIC_URL names the public address; the request goes to this test's server.)
  const res = await sys.http("POST", `/api/public/unsubscribe/${token}`, { headers: { "Content-Type": "application/x-www-form-urlencoded" }, raw: "List-Unsubscribe=One-Click" });
  expect(res.status).toBe(200);
  expect((await sys.http("GET", `/api/public/unsubscribe/${token}`)).body).toMatchObject({ unsubscribed: true });

  const tx = await sale(bob);
  const skipped = await waitFor(
    async () => (await emailsOf(bob.id)).filter((e) => e.kind === "commission_digest"),
    (list) => list.length === 2,
  );
  expect(skipped[0]).toMatchObject({ status: "skipped", skipReason: "The partner unsubscribed from these emails." });
  // Another category still mails.
  await sys.http("POST", "/api/v1/track/refund", { key: apiKey, body: { transaction_id: tx, refund_amount_cents: 1000 } });
  expect(await emailOf(bob.id, "commission_reduced")).toMatchObject({ status: "sent" });

  expect((await sys.http("POST", `/api/public/unsubscribe/${token}/resubscribe`)).body).toMatchObject({ unsubscribed: false });
  await sale(bob);
  await waitFor(
    async () => (await emailsOf(bob.id)).filter((e) => e.kind === "commission_digest" && e.status === "sent"),
    (list) => list.length === 2,
  );
  expect((await sys.http("POST", "/api/public/unsubscribe/not-a-token-of-any-email")).status).toBe(404);
});

test("the monthly summary: once per partner and month, with the month's figures and the balance now", async () => {
  await settings({ commissionEmails: "off", monthlySummary: true });
  const sue = await partner("Sue");
  await sale(sue, 50_000);
  const now = new Date();
  const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 20));
  expect((await schedule(nextMonth)).summaries).toBeGreaterThanOrEqual(1);
  // Once: run again, the schedule records no second summary for Sue (it may record one for a partner of an earlier
  // test whose activity the notifications service counted meanwhile).
  await schedule(nextMonth);
  expect((await emailsOf(sue.id)).filter((e) => e.kind === "monthly_summary")).toHaveLength(1);
  const email = await emailOf(sue.id, "monthly_summary");
  expect(email).toMatchObject({ status: "sent", category: "summaries", dedupeKey: `monthly_summary.${programId}.${sue.id}.${now.toISOString().slice(0, 7)}` });
  const mail = await parsed(sue, email.subject);
  expect(mail.text).toContain("- Earned: 50.00 USD (1 commission)");
  expect(mail.text).toMatch(/Your balance now: \d+\.\d{2} USD\./);
  // Every summary recorded is sent before the next test counts the mail server's refusals.
  await waitFor(
    async () => (await sys.admin("GET", `/programs/${programId}/partner-emails?status=pending`)).data,
    (pending: unknown[]) => pending.length === 0,
  );
});

test("an email the server refuses (5xx, then 4xx) is retried, then failed after the attempts allowed; the merchant sees each state and sends it again", async () => {
  await settings({ commissionEmails: "each" });
  const kim = await partner("Kim");
  smtp.refuseNext(1, 554);
  smtp.refuseNext(1, 451);
  await sale(kim);
  const failed = await emailOf(kim.id, "commission_digest", (e) => e.status === "failed");
  expect(failed).toMatchObject({ attempts: 2, lastError: expect.stringContaining("451") });
  expect(smtp.messages.filter((m) => m.raw.includes(failed.messageId))).toHaveLength(0);
  const log = await sys.admin("GET", `/programs/${programId}/partner-emails?status=failed`);
  expect(log.data.map((e: { id: number }) => e.id)).toContain(failed.id);
  const retried = await sys.admin("POST", `/programs/${programId}/partner-emails/${failed.id}/retry`);
  expect(retried).toMatchObject({ retried: true, email: { status: "pending", attempts: 0 } });
  expect(await emailOf(kim.id, "commission_digest", (e) => e.status === "sent")).toMatchObject({ messageId: failed.messageId });
  expect(smtp.messages.filter((m) => m.raw.includes(failed.messageId))).toHaveLength(1);
  expect(await sys.admin("POST", `/programs/${programId}/partner-emails/${failed.id}/retry`)).toMatchObject({ retried: false, email: { status: "sent" } });
});
