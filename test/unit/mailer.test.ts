/**
 * The mailers (shared/mailer.ts): the SMTP mailer against a real SMTP
 * receiver (smtp-server) with and without credentials, the log mailer's
 * line (with the link in text logs, without it in JSON logs), and the choice
 * the environment makes.
 */
import { LogMailer, mailerFromEnv, publicUrlFromEnv, SmtpMailer } from "../../shared/mailer";
import { startSmtpReceiver } from "../support/smtp";

const mail = { to: "jane@example.com", subject: "Your sign-in link to the partner portal", text: "Open https://track.example/portal/sign-in#token=abc\n" };

test("the SMTP mailer delivers to a real SMTP server, from MAIL_FROM", async () => {
  const receiver = await startSmtpReceiver();
  const mailer = new SmtpMailer(receiver.url, "Portal <portal@example.test>");
  try {
    expect(mailer.description).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
    await mailer.send(mail);
    const got = await receiver.waitFor("jane@example.com");
    expect(got.from).toBe("portal@example.test");
    expect(got.raw).toContain("Subject: Your sign-in link to the partner portal");
    expect(got.raw).toContain("From: Portal <portal@example.test>");
    expect(got.raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=")).toContain("https://track.example/portal/sign-in#token=abc");
  } finally {
    await mailer.close();
    await receiver.stop();
  }
});

test("the SMTP mailer signs in with the URL's credentials, which never show in its description", async () => {
  const receiver = await startSmtpReceiver({ user: "mailer", pass: "s3cret pass" });
  const good = new SmtpMailer(receiver.url, "portal@example.test");
  const bad = new SmtpMailer(receiver.url.replace("s3cret%20pass", "wrong"), "portal@example.test");
  try {
    expect(good.description).not.toContain("s3cret");
    await good.send(mail);
    expect((await receiver.waitFor("jane@example.com")).user).toBe("mailer");
    await expect(bad.send(mail)).rejects.toThrow(/Invalid username or password|auth/i);
    expect(receiver.messages).toHaveLength(1);
  } finally {
    await good.close();
    await bad.close();
    await receiver.stop();
  }
});

test("the SMTP mailer fails loudly when the server is unreachable", async () => {
  const receiver = await startSmtpReceiver();
  const url = receiver.url;
  await receiver.stop();
  const mailer = new SmtpMailer(url, "portal@example.test");
  await expect(mailer.send(mail)).rejects.toThrow();
  await mailer.close();
});

test("the log mailer writes one line: with the text in development, without it in JSON (production) logs", async () => {
  const lines: Array<{ message: string; fields: Record<string, unknown> }> = [];
  const log = (message: string, fields: Record<string, unknown>) => lines.push({ message, fields });
  await new LogMailer(log, true).send(mail);
  await new LogMailer(log, false).send(mail);
  expect(lines).toHaveLength(2);
  expect(lines[0].message).toContain("#token=abc");
  expect(lines[0].fields).toEqual({ mailer: "log", to: "jane@example.com", subject: mail.subject });
  expect(lines[1].message).not.toContain("token");
  expect(JSON.stringify(lines[1])).not.toContain("abc");
});

test("the environment picks the mailer and the public URL", async () => {
  const noop = () => undefined;
  expect(mailerFromEnv(noop, {}).description).toBe("log");
  const viaSmtpUrl = mailerFromEnv(noop, { SMTP_URL: "smtp://mail.example:2525" });
  expect(viaSmtpUrl.description).toBe("smtp://mail.example:2525");
  const viaMailUrl = mailerFromEnv(noop, { MAIL_URL: "smtps://u:p@mail.example:465", SMTP_URL: "smtp://ignored:25" });
  expect(viaMailUrl.description).toBe("smtps://mail.example:465");
  expect(() => mailerFromEnv(noop, { MAIL_URL: "http://mail.example" })).toThrow(/smtp:\/\/ or smtps:\/\//);
  await viaSmtpUrl.close();
  await viaMailUrl.close();
  // Text logs show the link; JSON logs (NODE_ENV=production) do not.
  const lines: string[] = [];
  await mailerFromEnv((m) => lines.push(m), { NODE_ENV: "production" }).send(mail);
  await mailerFromEnv((m) => lines.push(m), { LOG_FORMAT: "text" }).send(mail);
  expect(lines[0]).not.toContain("token=abc");
  expect(lines[1]).toContain("token=abc");

  expect(publicUrlFromEnv({})).toBe("http://localhost:3000");
  expect(publicUrlFromEnv({ PORT: "3001" })).toBe("http://localhost:3001");
  expect(publicUrlFromEnv({ PUBLIC_URL: "https://track.example.com/" })).toBe("https://track.example.com");
});
