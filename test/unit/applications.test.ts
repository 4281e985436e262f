/**
 * The rules of applications to a program (services/programs/applications.ts): answers and terms against the form,
 * the initial decision of auto-approval, what a decision does.
 * The applicant's emails are the notifications service's (test/unit/partner-emails.test.ts).
 */
import { alreadyEnrolledMessage, answersOf, applicationForm, applicationProblem, applicationTransition, initialDecision } from "../../services/programs/applications";
import { DEFAULT_APPLICATION_SETTINGS } from "../../services/programs/repository";

const form = { ...DEFAULT_APPLICATION_SETTINGS, questions: ["Where?", "How many readers?"], terms: "Be nice." };

describe("applicationProblem", () => {
  test("one answer per question, in any number of questions (none included)", () => {
    expect(applicationProblem(form, { answers: ["Blog", "4000"], acceptTerms: true })).toBeNull();
    expect(applicationProblem({ questions: [], terms: "" }, { answers: [], acceptTerms: false })).toBeNull();
    expect(applicationProblem(form, { answers: ["Blog"], acceptTerms: true })).toEqual({
      field: "answers",
      message: "must have exactly 2 answers, one per question of the form, in its order (got 1)",
    });
    expect(applicationProblem({ questions: ["Only?"], terms: "" }, { answers: ["a", "b"], acceptTerms: false })?.message).toMatch(/exactly 1 answer, one per question/);
    expect(applicationProblem({ questions: [], terms: "" }, { answers: ["a"], acceptTerms: false })?.message).toMatch(/no answers: the form asks no questions/);
  });

  test("terms must be accepted when the form has some (blank terms are none)", () => {
    expect(applicationProblem(form, { answers: ["Blog", "4000"], acceptTerms: false })).toEqual({ field: "acceptTerms", message: "must be true: accept the program's terms to apply" });
    expect(applicationProblem({ questions: [], terms: "  \n" }, { answers: [], acceptTerms: false })).toBeNull();
  });
});

test("answers keep the questions as asked", () => {
  expect(answersOf(["Where?", "How many?"], ["Blog", "4000"])).toEqual([
    { question: "Where?", answer: "Blog" },
    { question: "How many?", answer: "4000" },
  ]);
});

test("the public form: name, texts, questions, open", () => {
  expect(applicationForm({ id: 3, name: "Acme", applications: { ...form, open: true, autoApprove: true, autoApproveGroupId: 5, description: "Hi" } })).toEqual({
    programId: 3,
    programName: "Acme",
    description: "Hi",
    questions: ["Where?", "How many readers?"],
    terms: "Be nice.",
    open: true,
  });
});

describe("initialDecision", () => {
  test("pending unless the program approves at once; into its group while the group is live", () => {
    expect(initialDecision({ autoApprove: false, autoApproveGroupId: 4 }, true)).toEqual({ status: "pending", groupId: null });
    expect(initialDecision({ autoApprove: true, autoApproveGroupId: null }, true)).toEqual({ status: "approved", groupId: null });
    expect(initialDecision({ autoApprove: true, autoApproveGroupId: 4 }, true)).toEqual({ status: "approved", groupId: 4 });
    // The group was archived since: the merchant decides.
    expect(initialDecision({ autoApprove: true, autoApproveGroupId: 4 }, false)).toEqual({ status: "pending", groupId: null });
  });
});

describe("applicationTransition", () => {
  const decidedAt = new Date("2026-03-04T10:00:00Z");
  test("a pending application takes either decision", () => {
    expect(applicationTransition({ id: 1, status: "pending", decidedAt: null }, "approve")).toEqual({ kind: "change" });
    expect(applicationTransition({ id: 1, status: "pending", decidedAt: null }, "decline")).toEqual({ kind: "change" });
  });
  test("the same decision again is no change; the other is refused, saying what to do instead", () => {
    expect(applicationTransition({ id: 1, status: "approved", decidedAt }, "approve")).toEqual({ kind: "unchanged" });
    expect(applicationTransition({ id: 1, status: "declined", decidedAt }, "decline")).toEqual({ kind: "unchanged" });
    expect(applicationTransition({ id: 7, status: "approved", decidedAt }, "decline")).toEqual({
      kind: "refused",
      message: expect.stringMatching(/^Application 7 was approved on 2026-03-04: a decision on an application is final\. .*decline the partner/),
    });
    expect(applicationTransition({ id: 7, status: "declined", decidedAt }, "approve")).toEqual({
      kind: "refused",
      message: expect.stringMatching(/was declined on 2026-03-04.*approve the partner/),
    });
  });
});

test("already enrolled: what to do, by status", () => {
  expect(alreadyEnrolledMessage("a@example.com", "approved")).toMatch(/already a partner of this program\. Sign in to the partner portal/);
  expect(alreadyEnrolledMessage("a@example.com", "pending")).toMatch(/waiting for the merchant's approval/);
});
