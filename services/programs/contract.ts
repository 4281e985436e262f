import type { z } from "zod";
import type { Jsonified } from "../../shared/dto";
import type { Page } from "../../shared/pagination";
import type { Enrollment, Partner, Program } from "./repository";
import type * as S from "./schemas";

/**
 * The programs service's actions as a caller sees them: params as the zod
 * input schemas accept them, results as the bus delivers them (JSON: dates are
 * ISO strings). Callers use `call` from shared/bus.ts, never this file directly.
 */
export interface ProgramsContract {
  "programs.create": { params: z.input<typeof S.CreateProgramInput>; result: Jsonified<Program> };
  "programs.list": { params: z.input<typeof S.ListProgramsInput>; result: Page<Jsonified<Program>> };
  "programs.listForWorkspace": { params: z.input<typeof S.ListWorkspaceProgramsInput>; result: Page<Jsonified<Program>> };
  "programs.get": { params: z.input<typeof S.ProgramIdInput>; result: Jsonified<Program> };
  "programs.updateProcessorConnection": { params: z.input<typeof S.UpdateProcessorConnectionInput>; result: Jsonified<Program> | null };
  "programs.findByProcessorAccount": { params: z.input<typeof S.ProcessorAccountInput>; result: Jsonified<Program> | null };
  /** The secret `apiKey` is in this answer only. */
  "programs.createApiKey": { params: z.input<typeof S.ProgramIdInput>; result: { id: number; programId: number; apiKey: string; createdAt: string } };
  "programs.retireApiKey": { params: z.input<typeof S.KeyIdInput>; result: { id: number; programId: number; retiredAt: string } };
  "programs.authenticateKey": { params: z.input<typeof S.AuthenticateKeyInput>; result: { programId: number; keyId: number } };
  "programs.createPartner": { params: z.input<typeof S.CreatePartnerInput>; result: Jsonified<{ partner: Partner; enrollment: Enrollment }> };
  /** The approved enrollment behind a referral code, or null. */
  "programs.findReferral": { params: z.input<typeof S.FindReferralInput>; result: Jsonified<Enrollment> | null };
  "programs.getEnrollment": { params: z.input<typeof S.EnrollmentInput>; result: Jsonified<Enrollment> };
  "programs.getPartner": { params: z.input<typeof S.PartnerIdInput>; result: Jsonified<Partner> };
  "programs.hasApprovedPartners": { params: z.input<typeof S.ProgramIdInput>; result: boolean };
  "programs.enrollPartner": { params: z.input<typeof S.EnrollPartnerInput>; result: Jsonified<Enrollment> };
  /** The partner who signs in to the portal with this email: the oldest with an approved enrollment, or null. */
  "programs.findPartnerForSignIn": { params: z.input<typeof S.PartnerEmailInput>; result: Jsonified<Partner> | null };
  /** The partner and their enrollments in every program (any status). */
  "programs.getPartnerEnrollments": { params: z.input<typeof S.PartnerIdInput>; result: Jsonified<{ partner: Partner; enrollments: Enrollment[] }> };
}
