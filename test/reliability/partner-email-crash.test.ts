/**
 * Partner emails survive their process being killed (docs/partners.md, "Emails"). The gateway, notifications and
 * the other services run as separate processes over a real nats-server and PostgreSQL; mail goes to a real SMTP
 * receiver. Applications arrive, each to be answered by an email; the notifications process is killed with SIGKILL
 * in the middle of its batch, while the receiver holds a message it has not answered (the message is then refused,
 * as a server would whose client went away). Started again, the worker sends what was left: every application's
 * email is accepted exactly once, none twice, none lost.
 *
 * Needs nats-server and the PostgreSQL server binaries (CI installs both); skipped with a warning otherwise.
 */
import { randomBytes } from "node:crypto";
import { clusterSkipReason, NatsServer, PgCluster, startSplitSystem, until, type SplitSystem } from "./support/cluster";
import { requestJson } from "../support/processes";
import { startSmtpReceiver, type ReceivedMail, type SmtpReceiver } from "../support/smtp";

const skipReason = clusterSkipReason();
if (skipReason) console.warn(`PARTNER EMAIL CRASH TEST SKIPPED: ${skipReason}; emails sent across a killed process were NOT exercised in this run.`);
const describeCluster = skipReason ? describe.skip : describe;

const ADMIN_TOKEN = `email-crash-${randomBytes(16).toString("hex")}`;
const APPLICANTS = 8;
/** Kill the notifications process while the receiver holds this message (1-based), in the middle of the batch. */
const KILL_AT = 4;

const messageIdOf = (mail: ReceivedMail) => /^Message-ID: (.*)$/im.exec(mail.raw)?.[1]?.trim();

describeCluster("partner emails sent across a killed process, over a real nats-server, PostgreSQL and SMTP", () => {
  let nats: NatsServer;
  let pg: PgCluster;
  let smtp: SmtpReceiver;
  let system: SplitSystem;
  let received = 0;
  let killed: Promise<void> | null = null;

  const http = (method: string, urlPath: string, body?: unknown, key?: string) => requestJson(system.baseUrl + urlPath, method, { timeoutMs: 15_000, body, key });
  const admin = async (method: string, urlPath: string, body?: unknown): Promise<any> => {
    const res = await http(method, `/api/admin${urlPath}`, body, ADMIN_TOKEN);
    if (res.status >= 300) throw new Error(`${method} ${urlPath} -> ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  beforeAll(async () => {
    // The KILL_AT-th message arriving: the notifications process dies before the receiver answers it; then it is refused.
    const gate = async () => {
      if (++received !== KILL_AT) return true;
      killed = system.nodes.notifications.kill("SIGKILL");
      await killed;
      return false;
    };
    [pg, nats, smtp] = await Promise.all([PgCluster.create(), NatsServer.start(), startSmtpReceiver(undefined, gate)]);
    system = await startSplitSystem({
      name: "emails",
      pg,
      nats,
      adminToken: ADMIN_TOKEN,
      processes: { others: "accounts,programs,attribution,processor,rewards,status,sales,portal,commissions", notifications: "notifications" },
      // A send gets 2 s; the claim of a process that died lapses 4 s after it was made.
      env: { MAIL_URL: smtp.url, PARTNER_EMAIL_SEND_TIMEOUT_MS: "2000", APPLICATION_RATE_LIMIT: "1000" },
    });
  }, 150_000);

  afterAll(async () => {
    await system?.stop();
    await Promise.all([nats?.stop(), pg?.destroy(), smtp?.stop()]);
  }, 60_000);

  test("every application is answered by exactly one accepted email", async () => {
    try {
      // Stopped first, so the applications' emails wait and go out in one batch.
      await system.nodes.notifications.kill("SIGTERM");
      const program = await admin("POST", "/programs", { name: "Email crash", commissionRule: { type: "percentage", basisPoints: 2000 } });
      await admin("PATCH", `/programs/${program.id}/settings`, { applications: { open: true } });
      const emails: string[] = [];
      for (let i = 0; i < APPLICANTS; i++) {
        const email = `applicant-${i}-${randomBytes(3).toString("hex")}@example.com`;
        const res = await http("POST", `/api/public/programs/${program.id}/applications`, { name: `Applicant ${i}`, email, promotion: "A newsletter." });
        expect(res.status).toBe(201);
        emails.push(email);
      }
      system.nodes.notifications.start();

      expect(await until(async () => killed !== null, 60_000, 100)).toBe(true);
      await killed;
      system.nodes.notifications.start();
      const done = await until(async () => smtp.messages.length >= APPLICANTS, 60_000, 200);
      // Time for a duplicate to arrive, were one to be sent (the dead process's claims have lapsed by now).
      await until(async () => (await admin("GET", `/partner-emails?programId=${program.id}&status=pending`)).length === 0, 30_000, 200);

      expect({ done, received }).toEqual({ done: true, received: APPLICANTS + 1 });
      expect(smtp.messages.map((m) => m.to[0]).sort()).toEqual([...emails].sort());
      const ids = smtp.messages.map(messageIdOf);
      expect(new Set(ids).size).toBe(APPLICANTS);
      const recorded = await admin("GET", `/partner-emails?programId=${program.id}&limit=100`);
      expect(recorded.map((e: { status: string }) => e.status)).toEqual(Array(APPLICANTS).fill("sent"));
      expect(recorded.map((e: { messageId: string }) => e.messageId).sort()).toEqual([...ids].sort());
    } catch (err) {
      console.error(`Partner email crash processes:\n${system.logs()}`);
      throw err;
    }
  }, 240_000);
});
