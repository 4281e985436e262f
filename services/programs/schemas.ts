import { z } from "zod";
import { Currency, fromDecimalText } from "../../shared/validation";

/**
 * A record id: a JSON integer, or (path and query values are text) its canonical
 * decimal string. `01`, `0x1`, `1e0` or ` 1` are refused rather than read as 1,
 * so an id echoed back (the status endpoint's `programId`) is always what was sent.
 */
export const Id = z.preprocess(
  fromDecimalText,
  z.number({ error: "must be a positive integer (1 to 2147483647) written in plain decimal, e.g. 42" }).int().positive().max(2_147_483_647),
);


export const CommissionRuleInput = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("percentage"), basisPoints: z.number().int().min(0).max(10_000) }),
  z.strictObject({ type: z.literal("flat"), amountCents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) }),
]);

export const CreateProgramInput = z.strictObject({
  workspaceId: Id.nullish().transform((v) => v ?? null),
  name: z.string().trim().min(1).max(200),
  // The currency the program's sales and commissions (flat amounts too) are in; ISO 4217, default usd.
  currency: Currency.default("usd"),
  commissionRule: CommissionRuleInput,
  holdDays: z.number().int().min(0).max(365).default(30),
  recurringCommissionMonths: z.number().int().min(0).max(1200).nullable().default(null),
  testMode: z.boolean().default(false),
  paymentTrackingMode: z.enum(["processor_connect", "s2s"]).default("processor_connect"),
  allowedOrigins: z.array(z.string().url().max(300)).max(50).default([]),
});

export const ProgramIdInput = z.strictObject({ programId: Id });
export const KeyIdInput = z.strictObject({ keyId: Id });
export const AuthenticateKeyInput = z.object({ key: z.string().max(200) });

export const ReferralCode = z.string().trim().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "may contain letters, digits, '-' and '_'");

export const CreatePartnerInput = z.strictObject({
  programId: Id,
  name: z.string().trim().min(1).max(200),
  email: z.string().trim().toLowerCase().email().max(320).optional(),
  referralCode: ReferralCode.optional(),
});

export const FindReferralInput = z.object({ programId: Id, referralCode: ReferralCode });
export const EnrollmentInput = z.object({ programId: Id, partnerId: Id });

export const UpdateProcessorConnectionInput = z.strictObject({
  programId: Id,
  connectionStatus: z.string().trim().min(1).max(64).optional(),
  accountId: z.string().trim().min(1).max(255).nullable().optional(),
  chargesEnabled: z.boolean().optional(),
  payoutsEnabled: z.boolean().optional(),
  detailsSubmitted: z.boolean().optional(),
  /** When it connected; used only by the update that first connects (see connection-date.ts), default now. */
  connectedAt: z.iso
    .datetime({ offset: true })
    .optional()
    .transform((v) => (v === undefined ? undefined : new Date(v))),
});

export const ProcessorAccountInput = z.object({ accountId: z.string().trim().min(1).max(255) });
