/** A real SMTP receiver (smtp-server) on an ephemeral port, keeping every message it accepts. */
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** The user the client authenticated as, when it did. */
  user?: string;
}

export interface SmtpReceiver {
  url: string;
  messages: ReceivedMail[];
  /** Waits for a message to `to` beyond the `seen` first ones, and returns it. */
  waitFor(to: string, opts?: { after?: number; timeoutMs?: number }): Promise<ReceivedMail>;
  /** The sign-in link's token in a message (after "#token="). */
  tokenOf(mail: ReceivedMail): string;
  /** Answers the next `n` messages with a failure (451 by default, as a busy server does; or a 5xx), after those already asked for; they are not kept. */
  refuseNext(n: number, responseCode?: number): void;
  stop(): Promise<void>;
}

/**
 * `gate`, when given, decides each message once its data has arrived, before the server answers: true accepts it
 * (kept), false refuses it (451, not kept). A test can act in that moment (kill the sender).
 */
export async function startSmtpReceiver(auth?: { user: string; pass: string }, gate?: (mail: ReceivedMail) => Promise<boolean>): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const refusals: number[] = [];
  const server = new SMTPServer({
    disabledCommands: auth ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    authOptional: !auth,
    allowInsecureAuth: true,
    logger: false,
    onAuth(a, _session, cb) {
      if (auth && a.username === auth.user && a.password === auth.pass) cb(null, { user: a.username });
      else cb(new Error("Invalid username or password"));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const refusal = refusals.shift();
        if (refusal !== undefined) {
          return cb(Object.assign(new Error(`Refused (test receiver refusing with ${refusal})`), { responseCode: refusal }));
        }
        const mail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          user: session.user as string | undefined,
        };
        void (gate ?? (async () => true))(mail).then((accept) => {
          if (!accept) return cb(Object.assign(new Error("Try again later (test receiver refusing)"), { responseCode: 451 }));
          messages.push(mail);
          cb();
        });
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  const cred = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : "";
  return {
    url: `smtp://${cred}127.0.0.1:${port}`,
    messages,
    async waitFor(to, opts = {}) {
      const until = Date.now() + (opts.timeoutMs ?? 10_000);
      for (;;) {
        const found = messages.slice(opts.after ?? 0).find((m) => m.to.includes(to));
        if (found) return found;
        if (Date.now() > until) throw new Error(`No mail to ${to} within the time`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    tokenOf(mail) {
      // Quoted-printable may fold long lines ("=\r\n") and encode '=' as "=3D".
      const text = mail.raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
      const m = /#token=([A-Za-z0-9_-]{43})/.exec(text);
      if (!m) throw new Error(`No sign-in link in:\n${mail.raw}`);
      return m[1];
    },
    refuseNext(n, responseCode = 451) {
      refusals.push(...Array<number>(n).fill(responseCode));
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
