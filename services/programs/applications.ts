/**
 * Applications to a program from its public form (docs/dashboard-api.md, "Applications"): the rules the schemas
 * cannot see (the program's own questions and terms), what a decision does to an application, and the plain-text
 * mails the applicant gets. Pure functions: programs.service.ts reads and writes, these decide.
 *
 *   pending -> approved   (approve; or at once, when the program approves every application)
 *   pending -> declined   (decline)
 *
 * A decision is final for the application: the same decision again changes nothing (a retried click is harmless),
 * the other one is refused. The partner's enrollment can still change on the Partners screen, and a declined
 * applicant may apply again (a new application).
 */
import type { Application, ApplicationAnswer, ApplicationSettings, ApplicationStatus, EnrollmentStatus } from "./repository";

/** What the public page shows of a program's form. */
export interface ApplicationForm {
  programId: number;
  programName: string;
  description: string;
  questions: string[];
  terms: string;
  open: boolean;
}

export const applicationForm = (program: { id: number; name: string; applications: ApplicationSettings }): ApplicationForm => ({
  programId: program.id,
  programName: program.name,
  description: program.applications.description,
  questions: [...program.applications.questions],
  terms: program.applications.terms,
  open: program.applications.open,
});

/** A problem of an application's input against the program's form, naming the field as a 400 does. */
export interface ApplicationProblem {
  field: string;
  message: string;
}

/** The first problem of the answers and the terms' acceptance against the form's questions and terms; null when none. */
export function applicationProblem(settings: Pick<ApplicationSettings, "questions" | "terms">, input: { answers: readonly string[]; acceptTerms: boolean }): ApplicationProblem | null {
  const asked = settings.questions.length;
  if (input.answers.length !== asked) {
    const expected = asked === 0 ? "no answers: the form asks no questions" : `exactly ${asked} answer${asked === 1 ? "" : "s"}, one per question of the form, in its order`;
    return { field: "answers", message: `must have ${expected} (got ${input.answers.length})` };
  }
  if (settings.terms.trim() !== "" && !input.acceptTerms) return { field: "acceptTerms", message: "must be true: accept the program's terms to apply" };
  return null;
}

/** The questions as asked, each with its answer (the form may change later; the application keeps what was asked). */
export const answersOf = (questions: readonly string[], answers: readonly string[]): ApplicationAnswer[] => questions.map((question, i) => ({ question, answer: answers[i] ?? "" }));

/** How a new application is stored: approved at once (into the group, null: the default) when the program says so. */
export function initialDecision(settings: Pick<ApplicationSettings, "autoApprove" | "autoApproveGroupId">, groupIsLive: boolean): { status: "pending" | "approved"; groupId: number | null } {
  if (!settings.autoApprove) return { status: "pending", groupId: null };
  if (settings.autoApproveGroupId === null) return { status: "approved", groupId: null };
  // The group was archived since it was chosen: the merchant decides (nobody joins another group's rewards unasked).
  return groupIsLive ? { status: "approved", groupId: settings.autoApproveGroupId } : { status: "pending", groupId: null };
}

export type ApplicationDecisionKind = "approve" | "decline";

const TARGET: Record<ApplicationDecisionKind, ApplicationStatus> = { approve: "approved", decline: "declined" };

export const decisionTarget = (decision: ApplicationDecisionKind): "approved" | "declined" => TARGET[decision] as "approved" | "declined";

export type ApplicationTransition = { kind: "change" } | { kind: "unchanged" } | { kind: "refused"; message: string };

/** What a decision does to an application in `status`. */
export function applicationTransition(application: Pick<Application, "id" | "status" | "decidedAt">, decision: ApplicationDecisionKind): ApplicationTransition {
  if (application.status === "pending") return { kind: "change" };
  if (application.status === TARGET[decision]) return { kind: "unchanged" };
  const when = application.decidedAt ? ` on ${application.decidedAt.toISOString().slice(0, 10)}` : "";
  const instead =
    application.status === "approved"
      ? "To stop the partner's links from counting, decline the partner on the Partners screen."
      : "To take the partner on after all, approve the partner on the Partners screen (or they may apply again).";
  return { kind: "refused", message: `Application ${application.id} was ${application.status}${when}: a decision on an application is final. ${instead}` };
}

/** Why an email cannot apply (409), for the applicant: what to do instead. */
export function alreadyEnrolledMessage(email: string, status: EnrollmentStatus): string {
  return status === "approved"
    ? `${email} is already a partner of this program. Sign in to the partner portal with this email instead.`
    : `${email} is already a partner of this program, waiting for the merchant's approval: you will get an email when they decide.`;
}

export const applicationExistsMessage = (email: string): string =>
  `An application from ${email} to this program is already waiting for the merchant's decision: you will get an email when they decide.`;

export const applicationsClosedMessage = (programId: number): string => `Program ${programId} does not take applications at the moment. Ask the merchant when it opens them again.`;
