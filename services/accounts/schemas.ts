import { z } from "zod";
import { ROLES } from "../../shared/domain/permissions";
import { PERMISSIONS } from "../../shared/domain/permissions";
import { Id } from "../programs/schemas";

const Email = z.string().trim().toLowerCase().email().max(320);

export const CreateWorkspaceInput = z.strictObject({ name: z.string().trim().min(1).max(200) });
export const WorkspaceIdInput = z.object({ workspaceId: Id });

export const CreateUserInput = z.strictObject({
  email: Email,
  name: z.string().trim().min(1).max(200),
  password: z.string().min(12, "must be at least 12 characters").max(1024),
});

export const GrantRoleInput = z.strictObject({ workspaceId: Id, userId: Id, role: z.enum(ROLES as [string, ...string[]]) });

/** `POST /api/auth/login`. */
export const LoginRequest = z.strictObject({ email: Email, password: z.string().min(1).max(1024) });

export const SessionTokenInput = z.object({ token: z.string().min(1).max(200) });

export const CheckPermissionInput = z.object({ userId: Id, workspaceId: Id, permission: z.enum(PERMISSIONS) });
