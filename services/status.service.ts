import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { inputValidator, type Input } from "../shared/endpoint";
import { call, type BroadcastOf } from "../shared/bus";
import { InvalidatedCache } from "../shared/invalidated-cache";
import { buildTrackingStatus, TEST_EVENT_CAP } from "./status/tracking-status";
import { getProgram, programCacheMixin } from "../shared/program-cache";
import { STATUS } from "./status/endpoints";
import * as S from "./status/schemas";

type Vars = {
  /** `programs.hasApprovedPartners` by program, for PARTNERS_CACHE_TTL_MS; dropped on `programs.enrollmentChanged`. */
  partnersCache: InvalidatedCache<number, boolean>;
};

type Methods = { hasApprovedPartners(ctx: Context, programId: number): Promise<boolean> };

/**
 * Integration status for dashboard users (spec 2.4, 3.2). Owns no data: it
 * asks the owners in parallel and lets `buildTrackingStatus` decide.
 */
const StatusService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "status",
  mixins: [programCacheMixin],

  created() {
    this.partnersCache = new InvalidatedCache(Number(process.env.PARTNERS_CACHE_TTL_MS ?? 5000));
  },

  events: {
    /** Broadcast by programs when an enrollment is created or its status changes: the program's answer may have changed. */
    "programs.enrollmentChanged"(ctx: Context<BroadcastOf<"programs.enrollmentChanged">>) {
      this.partnersCache.delete(ctx.params.programId);
    },
  },

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
          this.hasApprovedPartners(ctx, programId),
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

  methods: {
    /** Through the cache: a program gains or loses its approved partners rarely, and the event says when. */
    async hasApprovedPartners(ctx: Context, programId: number): Promise<boolean> {
      const hit = this.partnersCache.get(programId);
      if (hit !== undefined) return hit;
      const ticket = this.partnersCache.ticket();
      const answer = await call(ctx, "programs.hasApprovedPartners", { programId });
      this.partnersCache.set(programId, answer, ticket);
      return answer;
    },
  },
};

export default StatusService;
