import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { inputValidator, type Input } from "../shared/endpoint";
import { call, type BroadcastOf, type ResultOf } from "./bus";
import { InvalidatedCache } from "../shared/invalidated-cache";
import { buildTrackingStatus, TEST_EVENT_CAP } from "./status/tracking-status";
import { getProgram, programCacheMixin } from "./clients/program-cache";
import { STATUS } from "./status/endpoints";
import * as S from "./status/schemas";

type TestEvents = ResultOf<"attribution.testEvents">;

type Vars = {
  /** `programs.hasApprovedPartners` by program, for STATUS_CACHE_TTL_MS; dropped on `programs.enrollmentChanged`. */
  partnersCache: InvalidatedCache<number, boolean>;
  /** `attribution.testEvents` by program, for STATUS_CACHE_TTL_MS; dropped on `attribution.testEventRecorded`. */
  testEventsCache: InvalidatedCache<number, TestEvents>;
};

type Methods = {
  hasApprovedPartners(ctx: Context, programId: number): Promise<boolean>;
  testEvents(ctx: Context, programId: number): Promise<TestEvents>;
};

/**
 * Integration status for dashboard users (spec 2.4, 3.2). Owns no data: it
 * asks the owners in parallel and lets `buildTrackingStatus` decide. The
 * owners' answers are kept per program until the owner broadcasts that they
 * changed (STATUS_CACHE_TTL_MS bounds a lost broadcast), so a dashboard
 * polling its status costs no bus call beyond the gateway's.
 */
const StatusService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "status",
  mixins: [programCacheMixin],

  created() {
    const ttlMs = Number(process.env.STATUS_CACHE_TTL_MS ?? 5000);
    this.partnersCache = new InvalidatedCache(ttlMs);
    this.testEventsCache = new InvalidatedCache(ttlMs);
  },

  events: {
    /** Broadcast by programs when an enrollment is created or its status changes: the program's answer may have changed. */
    "programs.enrollmentChanged"(ctx: Context<BroadcastOf<"programs.enrollmentChanged">>) {
      this.partnersCache.delete(ctx.params.programId);
    },
    /** Broadcast (and confirmed) by attribution before it answers a test click or a new test lead. */
    "attribution.testEventRecorded"(ctx: Context<BroadcastOf<"attribution.testEventRecorded">>) {
      this.testEventsCache.delete(ctx.params.programId);
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
        const [program, { clicks, leads }, hasPartners] = await Promise.all([getProgram(ctx, programId), this.testEvents(ctx, programId), this.hasApprovedPartners(ctx, programId)]);
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

    /** Through the cache: test events arrive while a developer integrates, and attribution says when. */
    async testEvents(ctx: Context, programId: number): Promise<TestEvents> {
      const hit = this.testEventsCache.get(programId);
      if (hit !== undefined) return hit;
      const ticket = this.testEventsCache.ticket();
      const answer = await call(ctx, "attribution.testEvents", { programId, limit: TEST_EVENT_CAP });
      this.testEventsCache.set(programId, answer, ticket);
      return answer;
    },
  },
};

export default StatusService;
