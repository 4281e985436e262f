/**
 * Team invitations (docs/dashboard-api.md, "Team"): how long one lives, the
 * link its mail holds, the mail's text and why a token is refused. Pure; the
 * accounts service stores, sends and accepts.
 */
import type { Invitation } from "./repository";

/** INVITATION_TTL_SECONDS: how long an invitation may be accepted (once); default 7 days, at least a second. */
export function invitationTtlMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.INVITATION_TTL_SECONDS;
  if (raw === undefined || raw === "") return 7 * 86_400_000;
  const seconds = Number(raw);
  if (!Number.isInteger(seconds) || seconds < 1) throw new Error(`INVITATION_TTL_SECONDS must be a whole number of seconds, at least 1 (got '${raw}')`);
  return seconds * 1000;
}

/**
 * The page the mail's link opens (the dashboard's, to accept with a name and password or sign in): the token is in
 * the fragment (#token=...), which browsers never send to a server, so it stays out of access logs, proxies and
 * Referer headers; the page posts it once to accept.
 */
export function invitationUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/dashboard/invitation#token=${token}`;
}

/** How long, in words, for the mail ("7 days", "2 hours", "30 minutes"). */
export function lifetimeInWords(ms: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (ms % 86_400_000 === 0) return unit(ms / 86_400_000, "day");
  if (ms % 3_600_000 === 0) return unit(ms / 3_600_000, "hour");
  if (ms >= 60_000) return unit(Math.round(ms / 60_000), "minute");
  return unit(Math.round(ms / 1000), "second");
}

export function invitationMail(i: { email: string; workspaceName: string; role: string; inviterName: string | null; url: string; ttlMs: number }) {
  const who = i.inviterName ? `${i.inviterName} invites you` : "You are invited";
  return {
    to: i.email,
    subject: `Join ${i.workspaceName} on the affiliate dashboard`,
    text:
      `Hello,\n\n${who} to join the workspace ${i.workspaceName} on the affiliate dashboard, as ${i.role}.\n\n` +
      `Open this link to accept:\n\n${i.url}\n\n` +
      `It works once, within ${lifetimeInWords(i.ttlMs)}. Without an account for ${i.email} yet, you choose your name and password there; ` +
      `with one, you accept and then sign in as usual. If you did not expect this invitation, ignore this mail.\n`,
  };
}

/** Why a token cannot be used, for the invitee (the same code, invitation_invalid, whatever the reason). */
export function refusalOf(invitation: Invitation | null, now: Date): string {
  const ask = "Ask an owner of the workspace to invite you again.";
  if (!invitation) return `This invitation link is not valid. Check that you opened the whole link from the mail. ${ask}`;
  if (invitation.acceptedAt) return "This invitation has been used already. Sign in with your email and password.";
  if (invitation.revokedAt) return `This invitation was withdrawn or replaced by a newer one. Use the link of the latest invitation mail, or ${ask[0].toLowerCase()}${ask.slice(1)}`;
  if (invitation.expiresAt.getTime() <= now.getTime()) return `This invitation has expired. ${ask}`;
  return `This invitation cannot be used now. ${ask}`;
}
