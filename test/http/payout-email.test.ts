/**
 * The partner's emails about a payout (docs/payouts.md, "Email"): withdrawal.paid and withdrawal.failed events,
 * delivered to notifications the way the commissions outbox relay delivers them (its claimed batch to
 * `notifications.events`, at least once), become one email each through a real SMTP receiver, with a Message-ID
 * fixed by the record; a partner without an email address gets none, and the record says why; an operator's
 * withdrawal paid by other means mails nobody; a mail the server refuses is sent again.
 */
import { startSmtpReceiver, type ReceivedMail, type SmtpReceiver } from "../support/smtp";
import { waitFor } from "../support/notifications";
import { startSystem, type TestSystem } from "../support/system";

let sys: TestSystem;
let smtp: SmtpReceiver;
let programId: number;
/** A partner with an email address, and one without (the bootstrap's). */
let jane: { id: number; email: string };
let nameless: number;

const PUBLIC_URL = "https://track.example.test";

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  sys = await startSystem({ env: { MAIL_URL: smtp.url, MAIL_FROM: "Acme partners <partners@example.test>", PUBLIC_URL } });
  const boot = await sys.bootstrap({ name: "Acme" });
  programId = boot.programId;
  nameless = boot.partnerId;
  const email = `jane-${process.pid}@example.com`;
  const { partner } = await sys.admin("POST", `/programs/${programId}/partners`, { name: "Jane Partner", email });
  jane = { id: partner.id, email };
});
afterAll(async () => {
  await sys?.stop();
  await smtp?.stop();
});

// Far above the ids the system's own outbox hands out in this test.
let nextEventId = 900_000;
let nextWithdrawalId = 500;

/** A withdrawal event's payload as the commissions service writes it (shared/events.ts). */
function withdrawalPayload(partnerId: number, over: Record<string, unknown> = {}) {
  return {
    withdrawalId: nextWithdrawalId++,
    programId,
    partnerId,
    currency: "usd",
    requestedCents: 12_345,
    amountCents: 12_345,
    status: "paid",
    commissionIds: [1, 2],
    createdAt: "2026-11-01T00:00:00.000Z",
    runId: 7,
    method: "stripe",
    ...over,
  };
}
const paid = (partnerId: number, over: Record<string, unknown> = {}) => withdrawalPayload(partnerId, { paidAt: "2026-11-02T00:00:00.000Z", transferId: "tr_1Pay0ut", ...over });
const failed = (partnerId: number, over: Record<string, unknown> = {}) =>
  withdrawalPayload(partnerId, {
    status: "failed",
    method: "bank",
    failureCode: "account_closed",
    failureReason: "The bank account is closed.",
    failedAt: "2026-11-03T00:00:00.000Z",
    wasPaid: true,
    ...over,
  });
const event = (type: string, payload: Record<string, unknown>, eventId = nextEventId++) => ({ eventId, type, occurredAt: "2026-11-02T00:00:00.000Z", payload });

/** One relay batch of the commissions outbox; every event must be consumed. */
async function deliver(...events: ReturnType<typeof event>[]) {
  const outcomes = await sys.broker.call("notifications.events", { producer: "commissions", events });
  expect(outcomes).toEqual(events.map(() => ({ ok: true })));
}

const emailsOf = async (partnerId: number): Promise<any[]> => sys.admin("GET", `/partner-emails?partnerId=${partnerId}&limit=100`);
const emailOfEvent = async (partnerId: number, eventId: number) => (await emailsOf(partnerId)).filter((e) => e.eventId === eventId);
/** Waits until the event's email is no longer pending (sent, or failed after its attempts). */
async function settled(partnerId: number, eventId: number) {
  const [email] = await waitFor(
    () => emailOfEvent(partnerId, eventId),
    (list) => list.length === 1 && list[0].status !== "pending",
  );
  return email;
}

/** The mail's text as written (quoted-printable soft breaks and `=` undone). */
const textOf = (mail: ReceivedMail) =>
  mail.raw
    .replace(/=\r?\n/g, "")
    .replace(/=3D/g, "=")
    .replace(/\r\n/g, "\n");
const headerOf = (mail: ReceivedMail, name: string) => new RegExp(`^${name}: (.*)$`, "im").exec(mail.raw.replace(/\r\n[ \t]+/g, " "))?.[1]?.trim();
const mailsWith = (messageId: string) => smtp.messages.filter((m) => headerOf(m, "Message-ID") === messageId);

test("a paid payout delivered twice mails the partner once, with the amount, the method, the portal and a Message-ID of its record", async () => {
  const twice = event("withdrawal.paid", paid(jane.id));
  // Redelivered in the same batch and in a later one, as an at-least-once relay may.
  await deliver(twice, twice);
  await deliver(twice);

  const email = await settled(jane.id, twice.eventId);
  expect(email).toMatchObject({
    producer: "commissions",
    kind: "payout_paid",
    programId,
    partnerId: jane.id,
    withdrawalId: twice.payload.withdrawalId,
    recipient: jane.email,
    status: "sent",
    attempts: 1,
    skipReason: null,
    messageId: `<payout_paid.commissions.${twice.eventId}@track.example.test>`,
    sentAt: expect.any(String),
  });
  const mails = mailsWith(email.messageId);
  expect(mails).toHaveLength(1);
  const [mail] = mails;
  expect(mail.to).toEqual([jane.email]);
  expect(headerOf(mail, "Subject")).toBe("Your payout of 123.45 USD from Acme was sent");
  expect(headerOf(mail, "List-Unsubscribe")).toMatch(/^<https:\/\/track\.example\.test\/api\/public\/unsubscribe\/[A-Za-z0-9_-]{32}>$/);
  const text = textOf(mail);
  expect(text).toContain("Hello Jane Partner,");
  expect(text).toContain("Your payout of 123.45 USD from the Acme partner program was sent by Stripe, to your connected Stripe account (Stripe transfer tr_1Pay0ut).");
  expect(text).toContain(`${PUBLIC_URL}/portal`);
  expect(text).toContain(`payout-${twice.payload.withdrawalId}`);
  expect(headerOf(mail, "Content-Type")).toMatch(/^multipart\/alternative/);
});

test("a failed payout mails the partner once, with the reason and that the amount is back in the balance", async () => {
  const failure = event("withdrawal.failed", failed(jane.id));
  await deliver(failure);
  await deliver(failure);

  const email = await settled(jane.id, failure.eventId);
  expect(email).toMatchObject({ kind: "payout_failed", status: "sent", attempts: 1, messageId: `<payout_failed.commissions.${failure.eventId}@track.example.test>` });
  const mails = mailsWith(email.messageId);
  expect(mails).toHaveLength(1);
  expect(headerOf(mails[0], "Subject")).toBe("Your payout of 123.45 USD from Acme was returned");
  // Money that did not arrive is never unsubscribed from: no one-click header (a paid payout's has one).
  expect(headerOf(mails[0], "List-Unsubscribe")).toBeUndefined();
  const text = textOf(mails[0]);
  expect(text).toContain("Your payout of 123.45 USD from the Acme partner program (by bank transfer, to your bank account) was returned after it was sent.");
  expect(text).toContain("Reason: The bank account is closed. (account_closed)");
  expect(text).toContain("The amount is back in your balance, for the next payout run.");
  expect(text).toContain(`${PUBLIC_URL}/portal`);
});

test("a partner without an email address gets no mail: the email is recorded skipped, with the reason", async () => {
  const failure = event("withdrawal.failed", failed(nameless, { wasPaid: false, method: "paypal" }));
  await deliver(failure);
  await deliver(failure);
  // Consumed before the answer: the record is there, once, and was never handed to the mailer.
  const [skipped, ...more] = await emailOfEvent(nameless, failure.eventId);
  expect(more).toEqual([]);
  expect(skipped).toMatchObject({ kind: "payout_failed", recipient: null, status: "skipped", attempts: 0, sentAt: null, skipReason: expect.stringMatching(/no email address/) });
  expect(await sys.admin("GET", `/partner-emails?partnerId=${nameless}&status=skipped`)).toEqual([skipped]);

  // A later email is sent while the skipped one stays as it was, and nothing went to the partner without an address.
  const later = event("withdrawal.paid", paid(jane.id));
  await deliver(later);
  expect(await settled(jane.id, later.eventId)).toMatchObject({ status: "sent" });
  expect(await emailOfEvent(nameless, failure.eventId)).toEqual([skipped]);
  expect(mailsWith(skipped.messageId)).toEqual([]);
});

test("an operator's withdrawal paid by other means mails nobody, also as an event of the version before payout runs", async () => {
  const byOperator = event("withdrawal.paid", paid(jane.id, { runId: null, method: null, transferId: null }));
  const older: Record<string, unknown> = paid(jane.id);
  for (const added of ["runId", "method", "transferId"]) delete older[added];
  const fromEarlierVersion = event("withdrawal.paid", older);
  await deliver(byOperator, fromEarlierVersion);
  expect(await emailOfEvent(jane.id, byOperator.eventId)).toEqual([]);
  expect(await emailOfEvent(jane.id, fromEarlierVersion.eventId)).toEqual([]);
});

test("a mail the server refuses for now is sent again, once, with the same Message-ID", async () => {
  smtp.refuseNext(1);
  const retried = event("withdrawal.paid", paid(jane.id, { method: "paypal", runId: 8, transferId: null }));
  await deliver(retried);
  const email = await settled(jane.id, retried.eventId);
  expect(email).toMatchObject({ status: "sent", attempts: 2 });
  const mails = mailsWith(email.messageId);
  expect(mails).toHaveLength(1);
  expect(textOf(mails[0])).toContain("was sent by PayPal, to your PayPal email.");
});
