/**
 * The team API (docs/dashboard-api.md, "Team"): invitations mailed through a
 * real SMTP receiver, accepted once before they expire; roles changed and
 * members removed, never the last owner (also when two demotions race); a
 * removed member's session loses the workspace on its very next request; only
 * members:write (owners) manage the team. The gateway's session and permission
 * caches live 10 minutes here, so only the accounts broadcasts can make it
 * forget.
 */
import { createAccountsRepository } from "../../services/accounts/storage";
import { hashSecret, randomToken } from "../../shared/secrets";
import { acquireDatabase, releaseDatabase } from "../../shared/storage/database";
import { startSmtpReceiver, type SmtpReceiver } from "../support/smtp";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";

const TTL_SECONDS = 3600;
const PASSWORD = "a long enough password";

let sys: TestSystem;
let smtp: SmtpReceiver;
let owner: Awaited<ReturnType<TestSystem["dashboardUser"]>>;
let ownerCookie: string;
let boot: Bootstrap;
let emails = 0;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  sys = await startSystem({
    env: {
      MAIL_URL: smtp.url,
      MAIL_FROM: "Team <team@example.test>",
      PUBLIC_URL: "https://track.example.test",
      INVITATION_TTL_SECONDS: String(TTL_SECONDS),
      SESSION_CACHE_TTL_MS: "600000",
    },
  });
  owner = await sys.dashboardUser("owner");
  ownerCookie = await sys.login(owner.email, owner.password);
  boot = await sys.bootstrap({ workspaceId: owner.workspaceId, holdDays: 0 });
});
afterAll(async () => {
  await sys?.stop();
  await smtp?.stop();
});

const freshEmail = () => `invitee${++emails}-${process.pid}@example.com`;
const as = (cookie: string) => ({ headers: { Cookie: cookie } });
const team = (workspaceId = owner.workspaceId) => `/api/workspaces/${workspaceId}`;
const invite = (email: string, role: string, cookie = ownerCookie, workspaceId = owner.workspaceId) =>
  sys.http("POST", `${team(workspaceId)}/invitations`, { ...as(cookie), body: { email, role } });
const accept = (body: Record<string, unknown>) => sys.http("POST", "/api/auth/invitations/accept", { body });
const members = async (workspaceId = owner.workspaceId) => (await sys.admin("GET", `/workspaces/${workspaceId}/members`)).data as Array<{ userId: number; role: string }>;
const ownersOf = async (workspaceId: number) => (await members(workspaceId)).filter((m) => m.role === "owner").map((m) => m.userId);

/** Invites by the dashboard, reads the token from the mail. */
async function invited(email: string, role: string, cookie = ownerCookie, workspaceId = owner.workspaceId): Promise<{ token: string; invitation: Record<string, any> }> {
  const seen = smtp.messages.length;
  const res = await invite(email, role, cookie, workspaceId);
  if (res.status !== 200) throw new Error(`invite -> ${res.status} ${JSON.stringify(res.body)}`);
  return { token: smtp.tokenOf(await smtp.waitFor(email, { after: seen })), invitation: res.body };
}

/** A new member through the whole flow: invited, accepted with a new account, signed in. */
async function newMember(role: string, workspaceId = owner.workspaceId, cookie = ownerCookie) {
  const email = freshEmail();
  const { token } = await invited(email, role, cookie, workspaceId);
  const res = await accept({ token, name: `New ${role}`, password: PASSWORD });
  if (res.status !== 200) throw new Error(`accept -> ${res.status} ${JSON.stringify(res.body)}`);
  return { email, userId: res.body.user.id as number, cookie: await sys.login(email, PASSWORD) };
}

async function pendingPartner(): Promise<number> {
  const { partner } = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Pending Pat", email: freshEmail(), status: "pending" });
  return partner.id;
}

test("invite as viewer: the mail arrives, the invitee accepts with a new account, signs in, can read but cannot approve a partner", async () => {
  const email = freshEmail();
  const before = Date.now();
  const seen = smtp.messages.length;
  const res = await invite(email.toUpperCase(), "viewer");
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    id: expect.any(Number),
    workspaceId: owner.workspaceId,
    email,
    role: "viewer",
    status: "pending",
    invitedBy: owner.userId,
    createdAt: expect.any(String),
    expiresAt: expect.any(String),
    replaced: false,
  });
  // The lifetime is INVITATION_TTL_SECONDS.
  const lifetime = Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt);
  expect(lifetime).toBe(TTL_SECONDS * 1000);
  expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);

  const mail = await smtp.waitFor(email, { after: seen });
  expect(mail.from).toBe("team@example.test");
  const text = mail.raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
  expect(text).toMatch(/Subject: Join Workspace \d+ on the affiliate dashboard/);
  expect(text).toContain("as viewer");
  expect(text).toContain("within 1 hour");
  expect(text).toMatch(/https:\/\/track\.example\.test\/dashboard\/invitation#token=[A-Za-z0-9_-]{43}/);
  const token = smtp.tokenOf(mail);

  // The owner sees it pending; never its token.
  const open = await sys.http("GET", `${team()}/invitations`, as(ownerCookie));
  expect(open.status).toBe(200);
  const { replaced: _replaced, ...shown } = res.body;
  expect(open.body.data).toContainEqual(shown);
  expect(JSON.stringify(open.body)).not.toContain(token);
  expect(JSON.stringify(open.body)).not.toContain(hashSecret(token));

  const accepted = await accept({ token, name: "Vera Viewer", password: PASSWORD });
  expect(accepted.status).toBe(200);
  expect(accepted.body).toEqual({ workspaceId: owner.workspaceId, role: "viewer", user: { id: expect.any(Number), email, name: "Vera Viewer" }, accountCreated: true, alreadyMember: false });
  // Accepting signs nobody in: the new member signs in next.
  expect(accepted.headers.get("set-cookie")).toBeNull();
  const cookie = await sys.login(email, PASSWORD);

  expect((await sys.http("GET", `/api/programs/${boot.programId}/partners`, as(cookie))).status).toBe(200);
  expect((await sys.http("GET", `${team()}/members`, as(cookie))).body.data).toContainEqual({
    userId: accepted.body.user.id,
    email,
    name: "Vera Viewer",
    role: "viewer",
    joinedAt: expect.any(String),
  });
  const partnerId = await pendingPartner();
  const approve = await sys.http("POST", `/api/programs/${boot.programId}/partners/${partnerId}/approve`, { ...as(cookie), body: {} });
  expect(approve.status).toBe(403);
  expect(approve.body.error.code).toBe("forbidden");
  // No longer open.
  expect((await sys.http("GET", `${team()}/invitations`, as(ownerCookie))).body.data.map((i: { email: string }) => i.email)).not.toContain(email);
});

test("the token works once: used again it is 410 invitation_invalid and changes nothing", async () => {
  const email = freshEmail();
  const { token } = await invited(email, "developer");
  expect((await accept({ token, name: "Dana", password: PASSWORD })).status).toBe(200);
  const again = await accept({ token, name: "Mallory", password: "another long password" });
  expect(again.status).toBe(410);
  expect(again.body).toEqual({ success: false, error: { code: "invitation_invalid", message: expect.stringMatching(/used already/) } });
  expect(await sys.login(email, PASSWORD)).toMatch(/^svc_session=/);
  expect((await sys.http("POST", "/api/auth/login", { body: { email, password: "another long password" } })).status).toBe(401);
  // Concurrent uses of one token: one joins.
  const racy = await invited(freshEmail(), "viewer");
  const results = await Promise.all(Array.from({ length: 4 }, (_, i) => accept({ token: racy.token, name: `Racer ${i}`, password: PASSWORD })));
  expect(results.map((r) => r.status).sort()).toEqual([200, 410, 410, 410]);
  // An unknown token is refused the same way.
  expect((await accept({ token: randomToken(32) })).body.error).toEqual({ code: "invitation_invalid", message: expect.stringMatching(/not valid/) });
});

test("an expired invitation is 410 invitation_invalid and changes nothing; so are withdrawn and replaced ones", async () => {
  const email = freshEmail();
  const token = randomToken(32);
  const db = await acquireDatabase(sys.databaseUrl);
  try {
    const repo = await createAccountsRepository(db);
    const now = Date.now();
    // Made an hour ago, expired a second ago (the clock as a parameter: no waiting).
    await repo.createInvitation({
      workspaceId: owner.workspaceId,
      email,
      role: "admin",
      tokenHash: hashSecret(token),
      invitedBy: owner.userId,
      expiresAt: new Date(now - 1000),
      now: new Date(now - 3_600_000),
    });
  } finally {
    await releaseDatabase(sys.databaseUrl);
  }
  const open = await sys.http("GET", `${team()}/invitations`, as(ownerCookie));
  expect(open.body.data.find((i: { email: string }) => i.email === email)).toMatchObject({ status: "expired", role: "admin" });
  const expired = await accept({ token, name: "Late", password: PASSWORD });
  expect(expired.status).toBe(410);
  expect(expired.body.error).toEqual({ code: "invitation_invalid", message: expect.stringMatching(/expired/) });
  expect((await sys.http("POST", "/api/auth/login", { body: { email, password: PASSWORD } })).status).toBe(401);

  // Withdrawn by an owner: its link stops at once; withdrawing again is 404.
  const withdrawn = await invited(freshEmail(), "viewer");
  const del = await sys.http("DELETE", `${team()}/invitations/${withdrawn.invitation.id}`, { ...as(ownerCookie), body: {} });
  expect(del.status).toBe(200);
  expect(del.body).toMatchObject({ id: withdrawn.invitation.id, status: "revoked" });
  expect((await sys.http("DELETE", `${team()}/invitations/${withdrawn.invitation.id}`, { ...as(ownerCookie), body: {} })).status).toBe(404);
  expect((await accept({ token: withdrawn.token, name: "W", password: PASSWORD })).body.error).toEqual({ code: "invitation_invalid", message: expect.stringMatching(/withdrawn/) });

  // Invited again: the new invitation replaces the open one, whose link stops working.
  const twice = freshEmail();
  const first = await invited(twice, "viewer");
  const second = await invited(twice, "developer");
  expect(second.invitation.replaced).toBe(true);
  const list = (await sys.http("GET", `${team()}/invitations`, as(ownerCookie))).body.data.filter((i: { email: string }) => i.email === twice);
  expect(list).toEqual([expect.objectContaining({ id: second.invitation.id, role: "developer" })]);
  expect((await accept({ token: first.token, name: "R", password: PASSWORD })).body.error.message).toMatch(/replaced/);
  expect((await accept({ token: second.token, name: "R", password: PASSWORD })).body).toMatchObject({ role: "developer" });
});

test("an email with an account accepts with the token alone; a password then is refused and changes nothing", async () => {
  const existing = await sys.admin("POST", "/users", { email: freshEmail(), name: "Existing", password: PASSWORD });
  const { token } = await invited(existing.email, "billing");
  const withPassword = await accept({ token, name: "Hijack", password: "chosen by someone else" });
  expect(withPassword.status).toBe(400);
  expect(withPassword.body.error.message).toMatch(/exists already: accept with the token alone/);
  const half = await accept({ token, password: "chosen by someone else" });
  expect(half.status).toBe(400);
  const ok = await accept({ token });
  expect(ok.status).toBe(200);
  expect(ok.body).toEqual({
    workspaceId: owner.workspaceId,
    role: "billing",
    user: { id: existing.id, email: existing.email, name: "Existing" },
    accountCreated: false,
    alreadyMember: false,
  });
  expect(await sys.login(existing.email, PASSWORD)).toMatch(/^svc_session=/);

  // A new email needs a name and password: without, 400, and the token still works.
  const fresh = await invited(freshEmail(), "viewer");
  const bare = await accept({ token: fresh.token });
  expect(bare.status).toBe(400);
  expect(bare.body.error.message).toMatch(/No account has the email/);
  // The name is one line: a line break is a 400 naming it, and the token still works.
  const injected = await accept({ token: fresh.token, name: "Fresh\r\nBcc: victim@example.com", password: PASSWORD });
  expect(injected.status).toBe(400);
  expect(injected.body.error).toEqual({ code: "invalid_request", message: expect.stringContaining("Invalid 'name': must be one line of text") });
  expect((await accept({ token: fresh.token, name: "Fresh", password: PASSWORD })).status).toBe(200);

  // A member's email cannot be invited again.
  const dup = await invite(existing.email, "viewer");
  expect(dup.status).toBe(409);
  expect(dup.body.error.code).toBe("conflict");
});

test("an owner changes a role: it applies on the member's very next request", async () => {
  const member = await newMember("viewer");
  const partnerId = await pendingPartner();
  const approvePath = `/api/programs/${boot.programId}/partners/${partnerId}/approve`;
  expect((await sys.http("POST", approvePath, { ...as(member.cookie), body: {} })).status).toBe(403);
  const changed = await sys.http("PATCH", `${team()}/members/${member.userId}`, { ...as(ownerCookie), body: { role: "admin" } });
  expect(changed.status).toBe(200);
  expect(changed.body).toEqual({ workspaceId: owner.workspaceId, userId: member.userId, role: "admin", createdAt: expect.any(String) });
  expect((await sys.http("POST", approvePath, { ...as(member.cookie), body: {} })).status).toBe(200);
  // Not a member: 404; a bad role: 400.
  const stranger = await sys.admin("POST", "/users", { email: freshEmail(), name: "Stranger", password: PASSWORD });
  expect((await sys.http("PATCH", `${team()}/members/${stranger.id}`, { ...as(ownerCookie), body: { role: "admin" } })).status).toBe(404);
  expect((await sys.http("PATCH", `${team()}/members/${member.userId}`, { ...as(ownerCookie), body: { role: "superuser" } })).status).toBe(400);
});

test("the last owner can be neither demoted nor removed (409), by the dashboard or the operator", async () => {
  const solo = await sys.dashboardUser("owner");
  const cookie = await sys.login(solo.email, solo.password);
  const demote = await sys.http("PATCH", `${team(solo.workspaceId)}/members/${solo.userId}`, { ...as(cookie), body: { role: "admin" } });
  expect(demote.status).toBe(409);
  expect(demote.body.error).toEqual({ code: "conflict", message: expect.stringMatching(/last owner of workspace \d+.*make another member owner first/) });
  const remove = await sys.http("DELETE", `${team(solo.workspaceId)}/members/${solo.userId}`, { ...as(cookie), body: {} });
  expect(remove.status).toBe(409);
  expect(remove.body.error.message).toMatch(/last owner/);
  const byOperator = await sys.http("POST", `/api/admin/workspaces/${solo.workspaceId}/members`, {
    key: "test-operator-token-0123456789abcdef",
    body: { userId: solo.userId, role: "viewer" },
  });
  expect(byOperator.status).toBe(409);
  expect((await sys.http("DELETE", `/api/admin/workspaces/${solo.workspaceId}/members/${solo.userId}`, { key: "test-operator-token-0123456789abcdef", body: {} })).status).toBe(409);
  expect(await ownersOf(solo.workspaceId)).toEqual([solo.userId]);
});

test("two owners demoted at once: one change wins, one owner stays", async () => {
  // Two owners demoting each other from the dashboard: the one demoted first may already be refused by the gateway (403).
  const a = await sys.dashboardUser("owner");
  const cookieA = await sys.login(a.email, a.password);
  const b = await newMember("owner", a.workspaceId, cookieA);
  const [byA, byB] = await Promise.all([
    sys.http("PATCH", `${team(a.workspaceId)}/members/${b.userId}`, { ...as(cookieA), body: { role: "viewer" } }),
    sys.http("PATCH", `${team(a.workspaceId)}/members/${a.userId}`, { ...as(b.cookie), body: { role: "viewer" } }),
  ]);
  expect([byA.status, byB.status].filter((s) => s === 200)).toHaveLength(1);
  const refused = [byA, byB].find((r) => r.status !== 200)!;
  expect([403, 409]).toContain(refused.status);
  expect(await ownersOf(a.workspaceId)).toHaveLength(1);

  // The operator demoting both at once (no role check before the change): exactly one 409.
  for (let round = 0; round < 3; round++) {
    const c = await sys.dashboardUser("owner");
    const d = await sys.dashboardUser("owner", c.workspaceId);
    const results = await Promise.all(
      [c, d].map((u) => sys.http("POST", `/api/admin/workspaces/${c.workspaceId}/members`, { key: "test-operator-token-0123456789abcdef", body: { userId: u.userId, role: "developer" } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await ownersOf(c.workspaceId)).toHaveLength(1);
  }
});

test("a removed member's session loses the workspace on its very next request", async () => {
  const member = await newMember("developer");
  // Read first, so the gateway remembers the session and the permission.
  expect((await sys.http("GET", `${team()}/members`, as(member.cookie))).status).toBe(200);
  expect((await sys.http("GET", `/api/programs/${boot.programId}/partners`, as(member.cookie))).status).toBe(200);
  const removed = await sys.http("DELETE", `${team()}/members/${member.userId}`, { ...as(ownerCookie), body: {} });
  expect(removed.status).toBe(200);
  expect(removed.body).toEqual({ removed: true, workspaceId: owner.workspaceId, userId: member.userId, role: "developer" });
  expect((await sys.http("GET", `${team()}/members`, as(member.cookie))).status).toBe(404);
  expect((await sys.http("GET", `/api/programs/${boot.programId}/partners`, as(member.cookie))).status).toBe(404);
  expect((await sys.http("GET", "/api/auth/me", as(member.cookie))).body.workspaces).toEqual([]);
  expect((await members()).map((m) => m.userId)).not.toContain(member.userId);
  expect((await sys.http("DELETE", `${team()}/members/${member.userId}`, { ...as(ownerCookie), body: {} })).status).toBe(404);
});

test("a viewer or developer cannot invite, list invitations, change roles or remove (403); every member lists the members", async () => {
  for (const role of ["viewer", "developer", "admin", "billing"]) {
    const member = await newMember(role);
    const seen = smtp.messages.length;
    const refused = await invite(freshEmail(), "owner", member.cookie);
    expect({ role, status: refused.status, code: refused.body.error?.code }).toEqual({ role, status: 403, code: "forbidden" });
    expect(refused.body.error.message).toContain("members:write");
    expect((await sys.http("GET", `${team()}/invitations`, as(member.cookie))).status).toBe(403);
    expect((await sys.http("PATCH", `${team()}/members/${member.userId}`, { ...as(member.cookie), body: { role: "owner" } })).status).toBe(403);
    expect((await sys.http("DELETE", `${team()}/members/${owner.userId}`, { ...as(member.cookie), body: {} })).status).toBe(403);
    expect((await sys.http("GET", `${team()}/members`, as(member.cookie))).status).toBe(200);
    expect(smtp.messages.length).toBe(seen);
  }
  // Another workspace's team is not found, like one that does not exist.
  const other = await sys.dashboardUser("owner");
  expect((await sys.http("GET", `${team(other.workspaceId)}/members`, as(ownerCookie))).status).toBe(404);
  expect((await invite(freshEmail(), "viewer", ownerCookie, other.workspaceId)).status).toBe(404);
  // Without a session: 401.
  expect((await sys.http("GET", `${team()}/members`)).status).toBe(401);
});

test("an operator invites a new workspace's first owner, who then manages the team", async () => {
  const workspace = await sys.admin("POST", "/workspaces", { name: "Fresh Co" });
  const email = freshEmail();
  const seen = smtp.messages.length;
  const created = await sys.admin("POST", `/workspaces/${workspace.id}/invitations`, { email, role: "owner" });
  expect(created).toMatchObject({ workspaceId: workspace.id, email, role: "owner", invitedBy: null, status: "pending" });
  const mail = await smtp.waitFor(email, { after: seen });
  expect(mail.raw).toContain("Subject: Join Fresh Co on the affiliate dashboard");
  expect((await sys.admin("GET", `/workspaces/${workspace.id}/invitations`)).data).toEqual([expect.objectContaining({ id: created.id })]);
  expect((await accept({ token: smtp.tokenOf(mail), name: "First Owner", password: PASSWORD })).status).toBe(200);
  const cookie = await sys.login(email, PASSWORD);
  expect((await sys.http("GET", `${team(workspace.id)}/invitations`, as(cookie))).status).toBe(200);
  expect(await members(workspace.id)).toEqual([expect.objectContaining({ email, name: "First Owner", role: "owner" })]);
  // Operators withdraw invitations and remove members too.
  const pending = await sys.admin("POST", `/workspaces/${workspace.id}/invitations`, { email: freshEmail(), role: "viewer" });
  expect(await sys.admin("DELETE", `/workspaces/${workspace.id}/invitations/${pending.id}`, {})).toMatchObject({ status: "revoked" });
  const viewer = await newMember("viewer", workspace.id, cookie);
  expect(await sys.admin("DELETE", `/workspaces/${workspace.id}/members/${viewer.userId}`, {})).toMatchObject({ removed: true });
  expect((await sys.http("GET", `${team(workspace.id)}/members`, as(viewer.cookie))).status).toBe(404);
});
