import type { Context, ServiceSchema } from "moleculer";
import { buildTrackingStatus, TEST_EVENT_CAP, type TestEventFacts } from "../shared/domain/tracking-status";
import type { Jsonified } from "../shared/dto";
import { getProgram, programCacheMixin } from "../shared/program-cache";
import { parseInput } from "../shared/validation";
import type { Program } from "./programs/repository";
import * as S from "./status/schemas";

/**
 * Integration status for dashboard users (spec 2.4, 3.2). Owns no data: it
 * asks the owners in parallel and lets `buildTrackingStatus` decide.
 */
const StatusService: ServiceSchema = {
  name: "status",
  mixins: [programCacheMixin],

  actions: {
    forProgram: {
      // Safe to send again: if its node is lost mid-call, the caller retries it on another instance (shared/failover.ts).
      idempotent: true,
      async handler(ctx: Context) {
        const { programId } = parseInput(S.ForProgramInput, ctx.params);
        const stats = (kind: "click" | "lead") =>
          ctx.call<TestEventFacts, unknown>("attribution.testEventStats", { programId, kind, limit: TEST_EVENT_CAP });
        const [program, clicks, leads, hasPartners] = await Promise.all([
          getProgram<Jsonified<Program>>(ctx, programId),
          stats("click"),
          stats("lead"),
          ctx.call<boolean, unknown>("programs.hasApprovedPartners", { programId }),
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
