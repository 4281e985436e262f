/**
 * Outgoing mail (partner sign-in links, partner emails), pluggable:
 *
 * - `MAIL_URL` (or `SMTP_URL`) set, e.g. `smtp://user:pass@smtp.example.com:587`
 *   or `smtps://...:465`: mail goes through that SMTP server (nodemailer),
 *   from `MAIL_FROM`.
 * - unset: the log mailer, for development. It writes one log line per mail.
 *   With text logs (development) the line carries the mail's text, link
 *   included, so a developer can click it; with JSON logs (NODE_ENV=production)
 *   it leaves the text out: a sign-in link in a log collector is a session
 *   for anyone who reads the logs. Operators hand out links with
 *   `cli partner-link` instead, or set MAIL_URL.
 */
import type { Transporter } from "nodemailer";
import { logFormatFromEnv } from "./observability";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /**
   * The Message-ID header ("<local@domain>"), when the sender must be able to send the same mail again with the same
   * id (a resend after a crash is then recognisable as a duplicate); else the transport makes one.
   */
  messageId?: string;
  /** An HTML part besides the text (the text stays the first, plain part). */
  html?: string;
  /** The From header's display name for this mail (the address stays MAIL_FROM's). */
  fromName?: string;
  replyTo?: string;
  /** One-click unsubscribe (RFC 8058): the URL a mail client POSTs `List-Unsubscribe=One-Click` to. */
  unsubscribeUrl?: string;
}

export interface Mailer {
  /** "log" or "smtp://host:port" (never the credentials), for the start banner and logs. */
  readonly description: string;
  send(mail: Mail): Promise<void>;
  close(): Promise<void>;
}

type LogLine = (message: string, fields: Record<string, string | number | boolean | null | undefined>) => void;

/** Development mailer: one log line per mail; the text (with its link) only when `showText`. */
export class LogMailer implements Mailer {
  readonly description = "log";
  constructor(
    private readonly log: LogLine,
    private readonly showText: boolean,
  ) {}

  async send(mail: Mail): Promise<void> {
    const fields = { mailer: "log", to: mail.to, subject: mail.subject, ...(mail.messageId ? { messageId: mail.messageId } : {}), ...(mail.replyTo ? { replyTo: mail.replyTo } : {}) };
    if (this.showText) this.log(`mail to ${mail.to}: ${mail.subject}\n${mail.text}`, fields);
    else this.log("mail not sent (no MAIL_URL); its text is left out of JSON logs", fields);
  }

  async close(): Promise<void> {}
}

/** SMTP through nodemailer, from a URL: smtp:// (STARTTLS when the server offers it) or smtps:// (TLS from the start). */
export class SmtpMailer implements Mailer {
  readonly description: string;
  private readonly transport: Transporter;
  /** MAIL_FROM's address alone ("partners@example.com" of "Acme <partners@example.com>"), for a mail with its own display name. */
  private readonly fromAddress: string;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    const parsed = new URL(url);
    if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") throw new Error(`MAIL_URL must start with smtp:// or smtps:// (got ${parsed.protocol}//)`);
    this.description = `${parsed.protocol}//${parsed.host}`;
    // Loaded only when MAIL_URL names an SMTP server: the default (mail to the log) does not carry nodemailer.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const nodemailer = require("nodemailer") as typeof import("nodemailer");
    this.transport = nodemailer.createTransport(url);
    this.fromAddress = /<([^>]+)>/.exec(from)?.[1] ?? from.trim();
  }

  async send(mail: Mail): Promise<void> {
    await this.transport.sendMail({
      from: mail.fromName ? { name: mail.fromName, address: this.fromAddress } : this.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      ...(mail.html ? { html: mail.html } : {}),
      ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
      ...(mail.messageId ? { messageId: mail.messageId } : {}),
      ...(mail.unsubscribeUrl ? { headers: { "List-Unsubscribe": `<${mail.unsubscribeUrl}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" } } : {}),
    });
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/** The mailer the environment asks for (see the top of this file). */
export function mailerFromEnv(log: LogLine, env: NodeJS.ProcessEnv = process.env): Mailer {
  const url = env.MAIL_URL || env.SMTP_URL;
  if (url) return new SmtpMailer(url, env.MAIL_FROM || "Affiliate partner portal <no-reply@localhost>");
  return new LogMailer(log, logFormatFromEnv(env) === "text");
}

/** Where links point: PUBLIC_URL (the address partners reach this server at), else this machine's port for development. */
export function publicUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return (env.PUBLIC_URL || `http://localhost:${env.PORT ?? 3000}`).replace(/\/+$/, "");
}
