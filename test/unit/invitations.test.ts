/** Team invitations' pure rules (services/accounts/invitations.ts): lifetime setting, link, mail text, refusals. */
import { invitationMail, invitationTtlMsFromEnv, invitationUrl, lifetimeInWords, refusalOf } from "../../services/accounts/invitations";
import type { Invitation } from "../../services/accounts/repository";

test("INVITATION_TTL_SECONDS: 7 days by default, whole seconds of at least 1, anything else refused at start", () => {
  expect(invitationTtlMsFromEnv({})).toBe(7 * 86_400_000);
  expect(invitationTtlMsFromEnv({ INVITATION_TTL_SECONDS: "" })).toBe(7 * 86_400_000);
  expect(invitationTtlMsFromEnv({ INVITATION_TTL_SECONDS: "3600" })).toBe(3_600_000);
  for (const bad of ["0", "-5", "1.5", "ten", "1e400"]) expect(() => invitationTtlMsFromEnv({ INVITATION_TTL_SECONDS: bad })).toThrow(/INVITATION_TTL_SECONDS/);
});

test("the link carries the token in its fragment, on PUBLIC_URL", () => {
  expect(invitationUrl("https://track.example/", "abc")).toBe("https://track.example/dashboard/invitation#token=abc");
});

test("the mail says who invites, to what, as what, and for how long", () => {
  const mail = invitationMail({ email: "dev@acme.test", workspaceName: "Acme", role: "viewer", inviterName: "Olga", url: "https://x/dashboard/invitation#token=t", ttlMs: 7 * 86_400_000 });
  expect(mail.to).toBe("dev@acme.test");
  expect(mail.subject).toBe("Join Acme on the affiliate dashboard");
  expect(mail.text).toContain("Olga invites you to join the workspace Acme on the affiliate dashboard, as viewer.");
  expect(mail.text).toContain("https://x/dashboard/invitation#token=t");
  expect(mail.text).toContain("within 7 days");
  expect(invitationMail({ email: "a@b.c", workspaceName: "W", role: "owner", inviterName: null, url: "u", ttlMs: 1000 }).text).toContain("You are invited to join");
  expect([86_400_000, 3_600_000, 2 * 3_600_000, 90 * 60_000, 30_000].map(lifetimeInWords)).toEqual(["1 day", "1 hour", "2 hours", "90 minutes", "30 seconds"]);
});

test("each refusal says why", () => {
  const now = new Date("2030-01-01T00:00:00Z");
  const base: Invitation = {
    id: 1,
    workspaceId: 1,
    email: "a@b.c",
    role: "viewer",
    tokenHash: "h",
    invitedBy: null,
    createdAt: new Date("2029-12-31T00:00:00Z"),
    expiresAt: new Date("2030-01-02T00:00:00Z"),
    acceptedAt: null,
    acceptedBy: null,
    revokedAt: null,
  };
  expect(refusalOf(null, now)).toMatch(/not valid/);
  expect(refusalOf({ ...base, acceptedAt: now, acceptedBy: 2 }, now)).toMatch(/used already/);
  expect(refusalOf({ ...base, revokedAt: now }, now)).toMatch(/withdrawn or replaced/);
  expect(refusalOf({ ...base, expiresAt: now }, now)).toMatch(/expired/);
});
