/**
 * Applications to a program (docs/dashboard-api.md, "Applications") through the real HTTP API: the public form and
 * the application (no sign-in), its rules (closed, one pending application per email, partners already in, answers
 * and terms, the honeypot, the per-address limit), the merchant's review (list, approve into a group, decline with a
 * message; idempotent, final), auto-approval, and the applicant's mails through a real SMTP receiver.
 */
import { startSmtpReceiver, type ReceivedMail, type SmtpReceiver } from "../support/smtp";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";

let sys: TestSystem;
let smtp: SmtpReceiver;
let boot: Bootstrap;
let owner: string;
let viewer: string;
let stranger: string;
let workspaceId: number;

const RATE_LIMIT = 3;
const QUESTION = "Where will you promote us?";
const TERMS = "Commissions are paid monthly once your balance reaches $50.";

let addresses = 0;
/** A client address of its own per caller (the system trusts X-Forwarded-For here), so no test throttles another. */
const freshAddress = () => `203.0.113.${++addresses}`;
let emails = 0;
const freshEmail = () => `applicant-${++emails}-${process.pid}@example.com`;

const form = (programId = boot.programId) => sys.http("GET", `/api/public/programs/${programId}/application`);
const apply = (body: Record<string, unknown>, opts: { programId?: number; address?: string } = {}) =>
  sys.http("POST", `/api/public/programs/${opts.programId ?? boot.programId}/applications`, { body, headers: { "X-Forwarded-For": opts.address ?? freshAddress() } });
const valid = (over: Record<string, unknown> = {}) => ({
  name: "Jane Applicant",
  email: freshEmail(),
  website: "https://jane.example",
  promotion: "A weekly newsletter on home baking, 4,000 readers.",
  answers: ["In my newsletter."],
  acceptTerms: true,
  ...over,
});
const dash = (cookie: string, method: string, path: string, body?: unknown, programId = boot.programId) =>
  sys.http(method, `/api/programs/${programId}${path}`, { headers: { Cookie: cookie }, body });
const applications = async (programId = boot.programId, query = "") => (await dash(owner, "GET", `/applications${query}`, undefined, programId)).body;
const applicationOf = async (id: number, programId = boot.programId) => (await applications(programId)).data.find((a: { id: number }) => a.id === id);

/** The mail's text as written (quoted-printable soft breaks and `=` undone). */
const textOf = (mail: ReceivedMail) =>
  mail.raw
    .replace(/=\r?\n/g, "")
    .replace(/=3D/g, "=")
    .replace(/\r\n/g, "\n");
const mailsTo = (email: string) => smtp.messages.filter((m) => m.to.includes(email));
const settle = () => new Promise((r) => setTimeout(r, 500));
/** Waits for the mail to `email` with this subject (mails are sent after the answer, in any order). */
async function mailWithSubject(email: string, subject: string): Promise<ReceivedMail> {
  for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 25))) {
    const found = mailsTo(email).find((m) => m.raw.includes(`\nSubject: ${subject}\r\n`));
    if (found) return found;
  }
  throw new Error(`No mail '${subject}' to ${email}`);
}

beforeAll(async () => {
  // Read per request by the gateway, after startSystem restored the environment.
  process.env.TRUST_PROXY = "true";
  smtp = await startSmtpReceiver();
  sys = await startSystem({
    env: { MAIL_URL: smtp.url, MAIL_FROM: "Acme partners <partners@example.test>", PUBLIC_URL: "https://track.example.test", APPLICATION_RATE_LIMIT: String(RATE_LIMIT) },
  });
  const ownerUser = await sys.dashboardUser("owner");
  workspaceId = ownerUser.workspaceId;
  const viewerUser = await sys.dashboardUser("viewer", workspaceId);
  const strangerUser = await sys.dashboardUser("owner");
  owner = await sys.login(ownerUser.email, ownerUser.password);
  viewer = await sys.login(viewerUser.email, viewerUser.password);
  stranger = await sys.login(strangerUser.email, strangerUser.password);
  boot = await sys.bootstrap({ workspaceId, name: "Acme partners", holdDays: 0 });
  const opened = await dash(owner, "PATCH", "/settings", { applications: { open: true, description: "We pay 20% on every sale.", questions: [QUESTION], terms: TERMS } });
  expect(opened.status).toBe(200);
});
afterAll(async () => {
  await sys?.stop();
  await smtp?.stop();
  delete process.env.TRUST_PROXY;
});

describe("the public form", () => {
  test("answers the program's form without sign-in; a closed one says so; an unknown program is 404", async () => {
    const res = await form();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ programId: boot.programId, programName: "Acme partners", description: "We pay 20% on every sale.", questions: [QUESTION], terms: TERMS, open: true });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();

    const closed = await sys.bootstrap({ workspaceId, name: "Closed program" });
    expect((await form(closed.programId)).body).toEqual({ programId: closed.programId, programName: "Closed program", description: "", questions: [], terms: "", open: false });
    const unknown = await form(987_654);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
  });

  test("the settings carry the form; a group that is not live is refused naming the field", async () => {
    const settings = (await dash(viewer, "GET", "/settings")).body;
    expect(settings.applications).toEqual({ open: true, autoApprove: false, autoApproveGroupId: null, description: "We pay 20% on every sale.", questions: [QUESTION], terms: TERMS });
    for (const [body, field] of [
      [{ applications: { autoApproveGroupId: 987_654 } }, "applications.autoApproveGroupId"],
      [{ applications: { questions: ["1", "2", "3", "4", "5", "6"] } }, "applications.questions"],
      [{ applications: { questions: ["  "] } }, "applications.questions.0"],
      [{ applications: { description: "x".repeat(2001) } }, "applications.description"],
      [{ applications: { terms: "x".repeat(5001) } }, "applications.terms"],
      [{ applications: { open: true, html: "<b>" } }, "applications"],
      [{ name: "Acme\nBcc: victim@example.com" }, "name"],
      [{ applications: { questions: ["Where\twill you promote us?"] } }, "applications.questions.0"],
      [{ applications: { description: "We pay \u0007 20%" } }, "applications.description"],
      [{ applications: { terms: "Paid monthly\u001b[31m" } }, "applications.terms"],
    ] as const) {
      const res = await dash(owner, "PATCH", "/settings", body);
      expect({ field, status: res.status, message: res.body.error?.message }).toEqual({ field, status: 400, message: expect.stringContaining(`'${field}`) });
    }
    expect((await dash(viewer, "GET", "/settings")).body).toEqual(settings);
    expect((await dash(viewer, "PATCH", "/settings", { applications: { open: false } })).status).toBe(403);
  });
});

describe("applying", () => {
  test("stores the application with a pending partner, answers 201 and mails a plain-text receipt", async () => {
    const body = valid({ email: `Jane.Case-${process.pid}@Example.com`, name: "Jane <b>Case</b>" });
    const res = await apply(body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ applicationId: expect.any(Number), status: "received" });
    const email = `jane.case-${process.pid}@example.com`;

    // Location: the new application, as the merchant reads it.
    const location = res.headers.get("location");
    expect(location).toBe(`/api/programs/${boot.programId}/applications/${res.body.applicationId}`);
    const stored = (await sys.http("GET", location!, { headers: { Cookie: viewer } })).body;
    expect(stored).toEqual(await applicationOf(res.body.applicationId));
    expect((await sys.http("GET", location!, { headers: { Cookie: stranger } })).status).toBe(404);
    expect(stored).toEqual({
      id: res.body.applicationId,
      programId: boot.programId,
      partnerId: expect.any(Number),
      name: "Jane <b>Case</b>",
      email,
      website: "https://jane.example/",
      promotion: body.promotion,
      answers: [{ question: QUESTION, answer: "In my newsletter." }],
      status: "pending",
      declineMessage: null,
      groupId: null,
      createdAt: expect.any(String),
      decidedAt: null,
    });
    const partners = (await dash(owner, "GET", "/partners?status=pending")).body.data;
    expect(partners).toContainEqual(expect.objectContaining({ partnerId: stored.partnerId, email, status: "pending", name: "Jane <b>Case</b>" }));
    const detail = (await dash(viewer, "GET", `/partners/${stored.partnerId}`)).body;
    expect(detail.application).toEqual(stored);
    expect((await dash(viewer, "GET", `/partners/${boot.partnerId}`)).body.application).toBeNull();

    const mail = await mailWithSubject(email, "We received your application to Acme partners");
    // A plain-text part and an HTML part, where the applicant's name is text, not markup.
    expect(mail.raw).toMatch(/^Content-Type: text\/plain/m);
    expect(mail.raw).toMatch(/^Content-Type: text\/html/m);
    expect(mail.raw).toContain("Hello Jane &lt;b&gt;Case&lt;/b&gt;,");
    expect(mail.raw).toContain("Subject: We received your application to Acme partners");
    expect(textOf(mail)).toContain("Hello Jane <b>Case</b>,");
  });

  test("a closed program: 409 applications_closed, nothing stored", async () => {
    const closed = await sys.bootstrap({ workspaceId, name: "Closed again" });
    const res = await apply(valid({ answers: [] }), { programId: closed.programId });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: { code: "applications_closed", message: expect.stringContaining("does not take applications") } });
    expect((await applications(closed.programId)).data).toEqual([]);
    expect((await apply(valid(), { programId: 987_654 })).status).toBe(404);
  });

  test("the honeypot filled: answered like a success, nothing stored, nothing mailed", async () => {
    const before = (await applications()).data.length;
    const partnersBefore = (await dash(owner, "GET", "/partners?limit=100")).body.data.length;
    const body = valid({ company: "Bots Inc." });
    const res = await apply(body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ applicationId: expect.any(Number), status: "received" });
    await settle();
    expect((await applications()).data.length).toBe(before);
    expect((await dash(owner, "GET", "/partners?limit=100")).body.data.length).toBe(partnersBefore);
    expect(mailsTo(body.email as string)).toEqual([]);
    // Empty, it is no honeypot.
    expect((await apply(valid({ company: "" }))).body.status).toBe("received");
  });

  test("the same email again (any case) while pending: 409 application_exists; a partner of the program: 409 already_enrolled", async () => {
    const email = freshEmail();
    expect((await apply(valid({ email }))).status).toBe(201);
    const again = await apply(valid({ email: `  ${email.toUpperCase()} ` }));
    expect(again.status).toBe(409);
    expect(again.body.error).toEqual({ code: "application_exists", message: expect.stringContaining("already waiting for the merchant's decision") });

    const partnerEmail = freshEmail();
    await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Already in", email: partnerEmail });
    const enrolled = await apply(valid({ email: partnerEmail }));
    expect(enrolled.status).toBe(409);
    expect(enrolled.body.error).toEqual({ code: "already_enrolled", message: expect.stringContaining("Sign in to the partner portal") });
  });

  test("each field's limits: 400 naming the field, nothing stored", async () => {
    const before = (await applications()).data.length;
    for (const [over, field] of [
      [{ answers: ["x".repeat(2001)] }, "answers.0"],
      [{ answers: [] }, "answers"],
      [{ answers: ["one", "two"] }, "answers"],
      [{ acceptTerms: false }, "acceptTerms"],
      [{ acceptTerms: undefined }, "acceptTerms"],
      [{ name: "x".repeat(101) }, "name"],
      [{ name: " " }, "name"],
      [{ email: "not an email" }, "email"],
      [{ email: `${"x".repeat(250)}@example.com` }, "email"],
      [{ website: "javascript:alert(1)" }, "website"],
      [{ website: `https://example.com/${"x".repeat(500)}` }, "website"],
      [{ promotion: "" }, "promotion"],
      [{ promotion: "x".repeat(2001) }, "promotion"],
      [{ referrer: "me" }, "referrer"],
      [{ name: "Eve\tTab" }, "name"],
      [{ name: "Eve\u0085Next line" }, "name"],
      [{ promotion: "A bell \u0007" }, "promotion"],
      [{ answers: ["\u001b[31mred"] }, "answers.0"],
    ] as const) {
      const res = await apply(valid(over));
      expect({ field, status: res.status, code: res.body.error?.code, message: res.body.error?.message }).toEqual({
        field,
        status: 400,
        code: "invalid_request",
        message: expect.stringContaining(`'${field}'`),
      });
    }
    expect((await applications()).data.length).toBe(before);
  });

  test("a line break in a name is refused and nothing is mailed; prose keeps its line breaks, written \\n", async () => {
    const email = freshEmail();
    const injected = await apply(valid({ email, name: "Eve\r\nBcc: victim@example.com" }));
    expect(injected.status).toBe(400);
    expect(injected.body.error).toEqual({ code: "invalid_request", message: expect.stringContaining("Invalid 'name': must be one line of text") });
    await settle();
    expect(mailsTo(email)).toEqual([]);

    const res = await apply(valid({ promotion: "My newsletter.\r\nMy blog.\rMy podcast.", answers: ["Twice\ta week.\r\n"] }));
    expect(res.status).toBe(201);
    expect(await applicationOf(res.body.applicationId)).toMatchObject({ promotion: "My newsletter.\nMy blog.\nMy podcast.", answers: [{ question: QUESTION, answer: "Twice\ta week." }] });
  });

  test(`at most ${RATE_LIMIT} applications per client address: then 429 with Retry-After`, async () => {
    const address = freshAddress();
    for (let i = 0; i < RATE_LIMIT; i++) expect((await apply(valid(), { address })).status).toBe(201);
    const refused = await apply(valid(), { address });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toEqual({ type: "rate_limit_error", code: "rate_limit_exceeded", message: expect.stringContaining("Too many applications from this client address") });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another address may still apply.
    expect((await apply(valid())).status).toBe(201);
  });
});

describe("the review", () => {
  const applied = async (over: Record<string, unknown> = {}) => {
    const body = valid(over);
    const res = await apply(body);
    expect(res.status).toBe(201);
    return { id: res.body.applicationId as number, email: body.email as string, ...(await applicationOf(res.body.applicationId)) };
  };
  const decide = (cookie: string, id: number, decision: "approve" | "decline", body: Record<string, unknown> = {}, programId = boot.programId) =>
    dash(cookie, "POST", `/applications/${id}/${decision}`, body, programId);

  test("lists newest first, by status, a page at a time", async () => {
    const a = await applied();
    const b = await applied();
    const page = await applications(boot.programId, "?status=pending&limit=1");
    expect(page.data.map((x: { id: number }) => x.id)).toEqual([b.id]);
    expect(page.nextCursor).toEqual(expect.any(String));
    const next = await applications(boot.programId, `?status=pending&limit=1&cursor=${page.nextCursor}`);
    expect(next.data.map((x: { id: number }) => x.id)).toEqual([a.id]);
    expect((await dash(viewer, "GET", "/applications?status=maybe")).status).toBe(400);
    expect((await sys.http("GET", `/api/admin/programs/${boot.programId}/applications?status=pending&limit=1`, { key: ADMIN_TOKEN })).body.data[0].id).toBe(b.id);
  });

  test("approve into a group: the partner is approved and in it, mailed a sign-in link once; again is no change; decline then is 409", async () => {
    const group = (await dash(owner, "POST", "/groups", { name: "Applicants", holdDays: 7 })).body;
    const app = await applied();
    const res = await decide(owner, app.id, "approve", { groupId: group.id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ application: { ...app, status: "approved", groupId: group.id, decidedAt: expect.any(String) }, changed: true });
    const rewards = (await dash(viewer, "GET", "/rewards")).body;
    expect(rewards.groups.find((g: { id: number }) => g.id === group.id).memberIds).toContain(app.partnerId);
    expect((await dash(viewer, "GET", `/partners/${app.partnerId}`)).body).toMatchObject({ status: "approved", application: res.body.application });

    const mail = await mailWithSubject(app.email, "Your application to Acme partners is approved");
    const token = smtp.tokenOf(mail);
    expect(textOf(mail)).toContain(`https://track.example.test/portal/sign-in#token=${token}`);
    const signedIn = await sys.http("POST", "/api/partner/auth/sign-in", { body: { token } });
    expect(signedIn.body).toEqual({ success: true, partnerId: app.partnerId });

    const again = await decide(owner, app.id, "approve", { groupId: group.id });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ application: res.body.application, changed: false });
    await settle();
    expect(
      mailsTo(app.email)
        .map((m) => /Subject: (.*)\r/.exec(m.raw)![1])
        .sort(),
    ).toEqual(["We received your application to Acme partners", "Your application to Acme partners is approved"]);

    const decline = await decide(owner, app.id, "decline", { message: "Changed our mind" });
    expect(decline.status).toBe(409);
    expect(decline.body.error).toEqual({ code: "conflict", message: expect.stringMatching(new RegExp(`^Application ${app.id} was approved on .*final`)) });
    expect((await applicationOf(app.id)).status).toBe("approved");
  });

  test("decline with a message: the partner is declined and mailed the message; approve then is 409; the declined may apply again", async () => {
    const app = await applied();
    const message = "We only work with food blogs for now.\nTry again next year!";
    const res = await decide(owner, app.id, "decline", { message });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ application: { ...app, status: "declined", declineMessage: message, decidedAt: expect.any(String) }, changed: true });
    expect((await dash(viewer, "GET", `/partners/${app.partnerId}`)).body.status).toBe("declined");
    const mail = await mailWithSubject(app.email, "Your application to Acme partners");
    expect(textOf(mail)).toContain(message);
    expect((await decide(owner, app.id, "decline", { message: "Again" })).body).toEqual({ application: res.body.application, changed: false });
    expect((await decide(owner, app.id, "approve")).status).toBe(409);

    const reapplied = await apply(valid({ email: app.email }));
    expect(reapplied.status).toBe(201);
    const second = await applicationOf(reapplied.body.applicationId);
    expect(second).toMatchObject({ partnerId: app.partnerId, status: "pending" });
    expect((await dash(viewer, "GET", `/partners/${app.partnerId}`)).body).toMatchObject({ status: "pending", application: second });
  });

  test("deciding on the partners endpoints decides the pending application too, with its mail", async () => {
    const app = await applied();
    const res = await dash(owner, "POST", `/partners/${app.partnerId}/approve`);
    expect(res.body).toMatchObject({ status: "approved", changed: true });
    expect(await applicationOf(app.id)).toEqual({ ...app, status: "approved", decidedAt: expect.any(String) });
    expect(smtp.tokenOf(await mailWithSubject(app.email, "Your application to Acme partners is approved"))).toEqual(expect.any(String));
    // The partner declined later: the application keeps its decision.
    expect((await dash(owner, "POST", `/partners/${app.partnerId}/decline`)).body.status).toBe("declined");
    expect((await applicationOf(app.id)).status).toBe("approved");

    const declined = await applied();
    await sys.admin("POST", `/programs/${boot.programId}/partners/${declined.partnerId}/status`, { status: "declined" });
    expect((await applicationOf(declined.id)).status).toBe("declined");
    await mailWithSubject(declined.email, "Your application to Acme partners");
  });

  test("a group that is not live decides nothing; an unknown application is 404", async () => {
    const app = await applied();
    const unknownGroup = await decide(owner, app.id, "approve", { groupId: 987_654 });
    expect(unknownGroup.status).toBe(404);
    expect((await applicationOf(app.id)).status).toBe("pending");
    expect((await decide(owner, 987_654, "approve")).status).toBe(404);
  });

  test("a viewer gets 403; another workspace's member and program get 404", async () => {
    const app = await applied();
    const res = await decide(viewer, app.id, "approve");
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
    expect((await decide(viewer, app.id, "decline")).status).toBe(403);
    expect((await dash(viewer, "GET", "/applications")).status).toBe(200);
    for (const attempt of [decide(stranger, app.id, "approve"), dash(stranger, "GET", "/applications")]) {
      const r = await attempt;
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
    // An application of this program through another program of the member's: not found there.
    const other = await sys.bootstrap({ workspaceId });
    expect((await decide(owner, app.id, "approve", {}, other.programId)).status).toBe(404);
    expect((await applicationOf(app.id)).status).toBe("pending");
  });

  test("auto-approval into a group: approved at once, in the group, mailed a sign-in link", async () => {
    const auto = await sys.bootstrap({ workspaceId, name: "Auto program" });
    const group = (await dash(owner, "POST", "/groups", { name: "Auto" }, auto.programId)).body;
    const set = await dash(owner, "PATCH", "/settings", { applications: { open: true, autoApprove: true, autoApproveGroupId: group.id } }, auto.programId);
    expect(set.body.applications).toMatchObject({ open: true, autoApprove: true, autoApproveGroupId: group.id });
    const body = valid({ answers: [], acceptTerms: false });
    const res = await apply(body, { programId: auto.programId });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ applicationId: expect.any(Number), status: "approved" });
    const stored = await applicationOf(res.body.applicationId, auto.programId);
    expect(stored).toMatchObject({ status: "approved", groupId: group.id, decidedAt: expect.any(String) });
    expect((await dash(viewer, "GET", `/partners/${stored.partnerId}`, undefined, auto.programId)).body.status).toBe("approved");
    const members = async () => (await dash(viewer, "GET", "/rewards", undefined, auto.programId)).body.groups.find((g: { id: number }) => g.id === group.id).memberIds;
    expect(await members()).toContain(stored.partnerId);
    const mail = await mailWithSubject(body.email as string, "Your application to Auto program is approved");
    expect(smtp.tokenOf(mail)).toEqual(expect.any(String));
    await settle();
    expect(mailsTo(body.email as string)).toHaveLength(1);

    // The group archived since: applications wait for the merchant.
    expect((await dash(owner, "POST", `/groups/${group.id}/archive`, {}, auto.programId)).status).toBe(200);
    const later = await apply(valid({ answers: [], acceptTerms: false }), { programId: auto.programId });
    expect(later.body.status).toBe("received");
    expect((await applicationOf(later.body.applicationId, auto.programId)).status).toBe("pending");
  });
});
