import { z } from "zod";
import { Id } from "../../shared/values";

/**
 * The ids the gateway reads from a path before the access check (the owner's
 * action validates its own input again). Same rules as the owners' schemas;
 * kept here so the gateway imports no other service's folder.
 */
export const ProgramIdParam = z.strictObject({ programId: Id });
export const WorkspaceIdParam = z.object({ workspaceId: Id });

/** The per-program Stripe webhook endpoint's path: read before the (raw) body, documented in the API reference. */
export const ProgramWebhookParams = z.strictObject({
  programId: Id.meta({ description: "The program whose own Stripe webhook endpoint this is.", example: 1 }),
});

/** The per-program Paddle notification endpoint's path. */
export const PaddleWebhookParams = z.strictObject({
  programId: Id.meta({ description: "The program whose Paddle notification destination this is.", example: 1 }),
});

/** The embedded referrals page's path (docs/embedded-referrals.md): its program names who may frame it. */
export const EmbedPageParams = z.strictObject({
  programId: Id.meta({ description: "The program whose referrals page this is (the embedUrl of an embed token names it).", example: 1 }),
});
