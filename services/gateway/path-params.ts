import { z } from "zod";
import { Id } from "../../shared/values";

/**
 * The ids the gateway reads from a path before the access check (the owner's
 * action validates its own input again). Same rules as the owners' schemas;
 * kept here so the gateway imports no other service's folder.
 */
export const ProgramIdParam = z.strictObject({ programId: Id });
export const WorkspaceIdParam = z.object({ workspaceId: Id });
