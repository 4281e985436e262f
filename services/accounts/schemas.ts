import { z } from "zod";
import { oneLine } from "../../shared/validation";
import { ROLES } from "../../shared/domain/permissions";
import { PERMISSIONS } from "../../shared/domain/permissions";
import { Email, Id } from "../../shared/values";
import { INVITE_LINK_MAX_MINUTES } from "./partner-sign-in";

export const CreateWorkspaceInput = z.strictObject({ name: oneLine(z.string().trim().min(1).max(200)).meta({ description: "The workspace's display name.", example: "Acme Inc" }) });
export const WorkspaceIdInput = z.object({ workspaceId: Id.describe("The workspace's id.") });

export const CreateUserInput = z.strictObject({
  email: Email.meta({ description: "The sign-in email (stored in lower case); unique.", example: "dev@acme.test" }),
  name: oneLine(z.string().trim().min(1).max(200)).meta({ description: "The name shown in the dashboard.", example: "Dev" }),
  password: z.string().min(12, "must be at least 12 characters").max(1024).describe("At least 12 characters; stored as a salted hash."),
});

export const GrantRoleInput = z.strictObject({
  workspaceId: Id.describe("The workspace's id."),
  userId: Id.describe("The user's id."),
  role: z.enum(ROLES as [string, ...string[]]).meta({ description: "The role; it decides what the user may see and change in the workspace.", example: "developer" }),
});

/** `POST /api/auth/login`. */
export const LoginRequest = z.strictObject({
  email: Email.meta({ description: "The user's email (any case).", example: "owner@example.com" }),
  password: z.string().min(1).max(1024).describe("The user's password."),
});

export const SessionTokenInput = z.object({ token: z.string().min(1).max(200) });

export const CheckPermissionInput = z.object({ userId: Id, workspaceId: Id, permission: z.enum(PERMISSIONS) });

/** `POST /api/partner/auth/link`: a partner asks for a sign-in link. */
export const PartnerLinkRequest = z.strictObject({
  email: Email.meta({ description: "The email the merchant enrolled you with (any case).", example: "jane@example.com" }),
});

/** Operators: a sign-in link for a partner (an invite), shown to the operator and, with send, mailed to the partner. */
export const CreatePartnerLinkInput = z.strictObject({
  partnerId: Id.meta({ description: "The partner's id.", example: 3 }),
  expiresInMinutes: z
    .number()
    .int()
    .min(1)
    .max(INVITE_LINK_MAX_MINUTES)
    .optional()
    .meta({ description: `How long the link may be used (once): 1 to ${INVITE_LINK_MAX_MINUTES} minutes; default 1440 (one day).`, example: 1440 }),
  send: z.boolean().default(false).describe("Also mail the link to the partner's email (through the configured mailer)."),
});

/** `POST /api/partner/auth/sign-in`: the token of a sign-in link. */
/**
 * The merchant's server asks for an embed token for one of its users (docs/embedded-referrals.md): the user is found
 * among the program's partners by tenantId, else by email, else enrolled (approved).
 */
export const CreateEmbedTokenInput = z.strictObject({
  programId: Id.meta({ description: "The program's id (set from the API key).", example: 1 }),
  tenantId: oneLine(z.string().trim().min(1).max(255)).meta({
    description: "Your own id of the user (their user id in your product): the same tenantId always gets the same partner.",
    example: "user_8731",
  }),
  email: z
    .string()
    .trim()
    .toLowerCase()
    .email()
    .max(320)
    .meta({ description: "The user's email: a partner of the program with this email is the same partner.", example: "jane@example.com" }),
  name: oneLine(z.string().trim().min(1).max(200)).meta({ description: "The user's name, for a partner enrolled now.", example: "Jane Doe" }),
  groupId: Id.optional().meta({ description: "A live partner group of the program to enroll a new partner in (e.g. Customers); default: the default group.", example: 2 }),
});

/** The embedded page exchanges its embed token for an embedded session. */
export const EmbedSessionRequest = z.strictObject({
  token: z.string().min(1).max(200).meta({ description: "The embed token your server got from POST /api/v1/embed-tokens (the page's ?token=).", example: "svc_et_q3T0...43 characters" }),
});

export const PartnerSignInRequest = z.strictObject({
  token: z.string().min(1).max(200).meta({ description: "The token from the sign-in link (after #token=).", example: "q3T0...43 characters" }),
});

const Role = z.enum(ROLES as [string, ...string[]]);

/** The team (docs/dashboard-api.md, "Team"): the workspace in the path. */
export const TeamListInput = z.strictObject({ workspaceId: Id.meta({ description: "The workspace's id.", example: 1 }) });

export const ChangeRoleInput = z.strictObject({
  workspaceId: Id.meta({ description: "The workspace's id.", example: 1 }),
  userId: Id.meta({ description: "The member's user id.", example: 5 }),
  role: Role.meta({ description: "The new role: owner, admin, developer, viewer or billing.", example: "admin" }),
});

export const RemoveMemberInput = z.strictObject({
  workspaceId: Id.meta({ description: "The workspace's id.", example: 1 }),
  userId: Id.meta({ description: "The member's user id.", example: 5 }),
});

export const CreateInvitationInput = z.strictObject({
  workspaceId: Id.meta({ description: "The workspace's id.", example: 1 }),
  email: Email.meta({ description: "Who to invite (any case; stored in lower case).", example: "dev@acme.test" }),
  role: Role.meta({ description: "The role they get when they accept: owner, admin, developer, viewer or billing.", example: "viewer" }),
});

export const RevokeInvitationInput = z.strictObject({
  workspaceId: Id.meta({ description: "The workspace's id.", example: 1 }),
  invitationId: Id.meta({ description: "The invitation's id.", example: 8 }),
});

/** `POST /api/auth/invitations/accept`: the token, and a name and password when the email has no account yet. */
export const AcceptInvitationInput = z.strictObject({
  token: z.string().min(1).max(200).meta({ description: "The token from the invitation link (after #token=).", example: "q3T0...43 characters" }),
  name: oneLine(z.string().trim().min(1).max(200)).optional().meta({ description: "Your name, for a new account (with password); leave out for an existing account.", example: "Dev" }),
  password: z
    .string()
    .min(12, "must be at least 12 characters")
    .max(1024)
    .optional()
    .describe("Your password, at least 12 characters, for a new account (with name); leave out for an existing account."),
});

/** A partner's portal visit from an address (the gateway's client address): only its hash of the day is kept. */
export const NotePartnerAddressInput = z.object({ partnerId: Id, address: z.string().min(1).max(64) });
export const PartnerAddressHashesInput = z.object({ partnerId: Id, day: z.iso.date() });
