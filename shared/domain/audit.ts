/**
 * A program's activity log (docs/dashboard-api.md, "Activity"): who changed what in the program, by which means and from
 * where. Pure: the gateway names each write's kind and actor with these, programs keeps the entries.
 */

/** What an entry changed, as the console's filter offers it. */
export const ACTIVITY_KINDS = ["partners", "commissions", "payouts", "rewards", "coupons", "webhooks", "fraud", "api_keys", "settings"] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

/** Who made a change: a signed-in member of the workspace, an API key of the program, or the operator (its token). */
export const ACTOR_TYPES = ["user", "api_key", "operator"] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** A write on a program, as its activity log keeps it: who made it, by which means and from where. */
export interface ActivityEntry {
  id: number;
  programId: number;
  actorType: ActorType;
  /** The user's or API key's id; null for the operator. */
  actorId: number | null;
  /** The user's email or the key's name, as they were then; null for the operator. */
  actorLabel: string | null;
  kind: ActivityKind;
  /** The operation (its API reference's summary) and the route it answered. */
  operation: string;
  summary: string;
  method: string;
  path: string;
  /** A created resource's address, or null. */
  location: string | null;
  status: number;
  clientAddress: string | null;
  userAgent: string | null;
  requestId: string | null;
  createdAt: Date;
}

/** The first segment of a program's path (after /api/programs/:programId, /api/admin/programs/:programId or /api/v1), by kind. */
const KIND_OF_SEGMENT: Readonly<Record<string, ActivityKind>> = {
  partners: "partners",
  applications: "partners",
  enrollments: "partners",
  commissions: "commissions",
  "payout-runs": "payouts",
  withdrawals: "payouts",
  "payout-schedule": "payouts",
  rewards: "rewards",
  groups: "rewards",
  "group-members": "rewards",
  "coupon-codes": "coupons",
  "webhook-endpoints": "webhooks",
  "fraud-settings": "fraud",
  fraud: "fraud",
  "api-keys": "api_keys",
};

/**
 * The kind of a write, from its route's path within the program (e.g. `/partners/:partnerId/ban`): its first segment's,
 * except that a partner's withdrawal is a payout and the program's PayPal credentials belong to payouts; any other
 * program setting (settings, Stripe, partner emails) is `settings`.
 */
export function activityKindOf(pathInProgram: string): ActivityKind {
  const segments = pathInProgram.split("/").filter(Boolean);
  if (segments.includes("withdrawals") || segments.join("/") === "processor/paypal") return "payouts";
  return KIND_OF_SEGMENT[segments[0] ?? ""] ?? "settings";
}

/** The `actor` filter of the activity list: `user:<id>`, `api_key:<id>` or `operator`. */
const ACTOR_FILTER = /^(?:(user|api_key):([1-9][0-9]{0,9})|(operator))$/;

export function parseActorFilter(text: string): { actorType: ActorType; actorId: number | null } | null {
  const match = ACTOR_FILTER.exec(text);
  if (!match) return null;
  if (match[3]) return { actorType: "operator", actorId: null };
  const actorId = Number(match[2]);
  return actorId <= 2_147_483_647 ? { actorType: match[1] as ActorType, actorId } : null;
}
