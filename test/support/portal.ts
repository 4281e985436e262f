/**
 * The partner portal's fixture: two programs and two partners (A enrolled in
 * P1 and P2, B in P1 only), mail going to a real SMTP receiver, and sign-in
 * through the real link flow.
 */
import type { BrokerOptions } from "moleculer";
import { startSmtpReceiver, type SmtpReceiver } from "./smtp";
import { startSystem, type Bootstrap, type TestSystem } from "./system";

export interface PortalPartner {
  partnerId: number;
  email: string;
  /** Per program id: the partner's referral code there. */
  codes: Record<number, string>;
}

export interface PortalFixture {
  sys: TestSystem;
  smtp: SmtpReceiver;
  p1: Bootstrap;
  p2: Bootstrap;
  a: PortalPartner;
  b: PortalPartner;
  /** The full sign-in: ask for a link, read it from the mail, open it; returns the partner cookie ("svc_partner_session=..."). */
  signIn(email: string, address?: string): Promise<string>;
  /** Signs in with an operator's invite link (no mail, no link-request throttle). */
  signInByInvite(partnerId: number): Promise<string>;
  /** Asks for a link (from a client address of the caller's choosing: the system trusts X-Forwarded-For). */
  requestLink(email: string, address?: string): ReturnType<TestSystem["http"]>;
  stop(): Promise<void>;
}

let addresses = 0;
/** A client address of its own for each caller, so one test's link requests never throttle another's. */
export const freshAddress = () => `198.51.100.${++addresses}`;

export async function startPortalFixture(opts: { env?: Record<string, string>; broker?: BrokerOptions } = {}): Promise<PortalFixture> {
  // Read per request by the gateway, after startSystem restored the environment.
  process.env.TRUST_PROXY = "true";
  const smtp = await startSmtpReceiver();
  const sys = await startSystem({ env: { MAIL_URL: smtp.url, MAIL_FROM: "Portal <portal@example.test>", PUBLIC_URL: "https://track.example.test", ...opts.env }, broker: opts.broker });
  const tag = `${process.pid}-${Date.now()}`;
  const p1 = await sys.bootstrap({ name: "Program One", holdDays: 0, allowedOrigins: ["https://shop-one.example"] });
  const p2 = await sys.bootstrap({ name: "Program Two", holdDays: 0 });
  const aEmail = `alice-${tag}@example.com`;
  const bEmail = `bob-${tag}@example.com`;
  const a = await sys.admin("POST", `/programs/${p1.programId}/partners`, { name: "Alice", email: aEmail, referralCode: `alice-${tag}` });
  const a2 = await sys.admin("POST", `/programs/${p2.programId}/enrollments`, { partnerId: a.partner.id, referralCode: `alice2-${tag}` });
  const b = await sys.admin("POST", `/programs/${p1.programId}/partners`, { name: "Bob", email: bEmail, referralCode: `bob-${tag}` });

  const requestLink = (email: string, address = freshAddress()) => sys.http("POST", "/api/partner/auth/link", { body: { email }, headers: { "X-Forwarded-For": address } });
  return {
    sys,
    smtp,
    p1,
    p2,
    a: { partnerId: a.partner.id, email: aEmail, codes: { [p1.programId]: a.enrollment.referralCode, [p2.programId]: a2.referralCode } },
    b: { partnerId: b.partner.id, email: bEmail, codes: { [p1.programId]: b.enrollment.referralCode } },
    requestLink,
    async signIn(email, address) {
      const seen = smtp.messages.length;
      const asked = await requestLink(email, address);
      if (asked.status !== 200) throw new Error(`link -> ${asked.status} ${JSON.stringify(asked.body)}`);
      const token = smtp.tokenOf(await smtp.waitFor(email, { after: seen }));
      const res = await sys.http("POST", "/api/partner/auth/sign-in", { body: { token } });
      if (res.status !== 200) throw new Error(`sign-in -> ${res.status} ${JSON.stringify(res.body)}`);
      return res.headers.get("set-cookie")!.split(";")[0];
    },
    async signInByInvite(partnerId) {
      const link = await sys.admin("POST", `/partners/${partnerId}/sign-in-links`, {});
      const res = await sys.http("POST", "/api/partner/auth/sign-in", { body: { token: new URL(link.url).hash.slice("#token=".length) } });
      if (res.status !== 200) throw new Error(`sign-in -> ${res.status} ${JSON.stringify(res.body)}`);
      return res.headers.get("set-cookie")!.split(";")[0];
    },
    async stop() {
      await sys.stop();
      await smtp.stop();
      delete process.env.TRUST_PROXY;
    },
  };
}
