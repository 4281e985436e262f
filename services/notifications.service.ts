import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { z } from "zod";
import { toDto } from "../shared/dto";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { parseInput } from "../shared/validation";
import { createNotificationsRepository, type NotificationsRepository } from "./notifications/repository";
import { Id } from "./programs/schemas";

const CommissionEventInput = z.object({
  eventId: Id,
  type: z.string(),
  payload: z.looseObject({
    commissionId: Id,
    programId: Id,
    partnerId: Id,
    transactionId: z.string(),
    status: z.string(),
    currency: z.string(),
    reason: z.string().nullable(),
    deductionCents: z.number().int().optional(),
    wasPaidOut: z.boolean().optional(),
  }),
});

const ListInput = z.object({
  programId: Id.optional(),
  partnerId: Id.optional(),
  kind: z.enum(["partner_notice", "advertiser_warning"]).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

/**
 * Turns commission reversals into a partner notice and, when the partner was
 * already paid, a manual-review warning for the advertiser (spec 3.1, 6.3).
 * Delivery from the commissions outbox is at least once; storing on
 * (event id, kind) makes it exactly once in effect.
 */
const NotificationsService: ServiceSchema<ServiceSettingSchema, {}, StorageVars<NotificationsRepository>> = {
  name: "notifications",
  mixins: [storageMixin(createNotificationsRepository)],

  actions: {
    commissionEvent: {
      visibility: "public",
      async handler(ctx: Context) {
        const { eventId, type, payload } = parseInput(CommissionEventInput, ctx.params);
        if (type !== "commission.refunded" && type !== "commission.reversed") return { handled: false };
        const facts = {
          eventId,
          programId: payload.programId,
          partnerId: payload.partnerId,
          commissionId: payload.commissionId,
          transactionId: payload.transactionId,
          status: payload.status,
          deductionCents: payload.deductionCents ?? 0,
          currency: payload.currency,
          reason: payload.reason,
        };
        await this.repo.insertOnce({ ...facts, kind: "partner_notice" });
        if (payload.wasPaidOut) await this.repo.insertOnce({ ...facts, kind: "advertiser_warning" });
        return { handled: true };
      },
    },

    list: {
      async handler(ctx: Context) {
        return toDto(await this.repo.list(parseInput(ListInput, ctx.params)));
      },
    },
  },
};

export default NotificationsService;
