import type { Context, ServiceSchema } from "moleculer";
import { inputValidator, type Input } from "../shared/endpoint";
import { call } from "../shared/bus";
import { buildTrackingStatus, TEST_EVENT_CAP } from "./status/tracking-status";
import { getProgram, programCacheMixin } from "../shared/program-cache";
import { STATUS } from "./status/endpoints";
import * as S from "./status/schemas";

/**
 * Integration status for dashboard users (spec 2.4, 3.2). Owns no data: it
 * asks the owners in parallel and lets `buildTrackingStatus` decide.
 */
const StatusService: ServiceSchema = {
  name: "status",
  mixins: [programCacheMixin],

  // Params are validated against each action's declared input (status/endpoints.ts, shared/endpoint.ts).
  hooks: { before: { "*": inputValidator(STATUS) } },

  actions: {
    forProgram: {
      // Safe to send again: if its node is lost mid-call, the caller retries it on another instance (shared/failover.ts).
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ForProgramInput>>) {
        const { programId } = ctx.params;
        const [program, { clicks, leads }, hasPartners] = await Promise.all([
          getProgram(ctx, programId),
          call(ctx, "attribution.testEvents", { programId, limit: TEST_EVENT_CAP }),
          call(ctx, "programs.hasApprovedPartners", { programId }),
        ]);
        const p = program.processor;
        return buildTrackingStatus({
          programId: String(programId),
          clicks,
          leads,
          payments: {
            paymentTrackingMode: program.paymentTrackingMode,
            connectionStatus: p.connectionStatus,
            accountId: p.accountId,
            chargesEnabled: p.chargesEnabled,
            payoutsEnabled: p.payoutsEnabled,
            detailsSubmitted: p.detailsSubmitted,
            connectedAt: p.connectedAt,
          },
          hasPartners,
          now: new Date(),
        });
      },
    },
  },
};

export default StatusService;
