/**
 * A partner's enrollment in a program: who may earn there. Only an approved
 * enrollment's referral code is tracked (programs.findReferral), so approving
 * starts a partner's tracking and declining stops it; commissions already
 * earned stay as they are (docs/merchants.md, "Partners").
 *
 *   pending  -> approved   (approve: the merchant accepts the application)
 *   pending  -> declined   (decline)
 *   approved -> declined   (decline: a partner removed; their links stop counting)
 *   declined -> approved   (approve: a decision reversed)
 *
 * Nothing goes back to pending (it means "not decided yet"). Asking for the
 * status an enrollment already has changes nothing and is not an error, so a
 * retried click or request is harmless.
 */
import type { EnrollmentStatus } from "./repository";

export type EnrollmentDecision = "approve" | "decline";

const TARGET: Record<EnrollmentDecision, EnrollmentStatus> = { approve: "approved", decline: "declined" };

/** The statuses each decision may change, to its target. */
export const ALLOWED_FROM: Record<EnrollmentDecision, readonly EnrollmentStatus[]> = {
  approve: ["pending", "declined"],
  decline: ["pending", "approved"],
};

export type Transition = { kind: "change"; from: EnrollmentStatus; to: EnrollmentStatus } | { kind: "unchanged"; status: EnrollmentStatus } | { kind: "refused"; message: string };

/** What a decision does to an enrollment in `current`. */
export function enrollmentTransition(current: EnrollmentStatus, decision: EnrollmentDecision): Transition {
  const to = TARGET[decision];
  if (current === to) return { kind: "unchanged", status: current };
  if (ALLOWED_FROM[decision].includes(current)) return { kind: "change", from: current, to };
  return { kind: "refused", message: `A ${current} enrollment cannot be ${to}.` };
}

export const targetOf = (decision: EnrollmentDecision): EnrollmentStatus => TARGET[decision];
