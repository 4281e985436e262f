/**
 * The endpoint declarations (shared/endpoint.ts): every action's params are
 * validated by its service's hook, before the handler, with the messages of
 * parseInput, for calls over the bus as for HTTP; and no action of the system
 * loses its input schema unnoticed.
 */
import { ServiceBroker, type Context } from "moleculer";
import { z } from "zod";
import { ALL_SERVICES, loadService } from "../../bin/start";
import { declareActions, inputValidator, type Input } from "../../shared/endpoint";
import { ACCOUNTS } from "../../services/accounts/endpoints";
import { ATTRIBUTION } from "../../services/attribution/endpoints";
import { COMMISSIONS } from "../../services/commissions/endpoints";
import { GATEWAY } from "../../services/gateway/endpoints";
import { NOTIFICATIONS } from "../../services/notifications/endpoints";
import { PORTAL } from "../../services/portal/endpoints";
import { PROCESSOR } from "../../services/processor/endpoints";
import { PROGRAMS } from "../../services/programs/endpoints";
import { REWARDS } from "../../services/rewards/endpoints";
import { SALES } from "../../services/sales/endpoints";
import { STATUS } from "../../services/status/endpoints";

const Id = z.preprocess((v) => (typeof v === "string" && /^[1-9][0-9]*$/.test(v) ? Number(v) : v), z.number().int().positive());
const ThingInput = z.strictObject({ thingId: Id, name: z.string().trim().min(1) });
const THINGS = declareActions("things", { get: { input: ThingInput }, free: {} });

describe("inputValidator", () => {
  const broker = new ServiceBroker({ logger: false, transporter: null });
  const seen: unknown[] = [];
  broker.createService({
    name: "things",
    hooks: { before: { "*": inputValidator(THINGS) } },
    actions: {
      get: {
        handler(ctx: Context<Input<typeof ThingInput>>) {
          seen.push(ctx.params);
          return { id: ctx.params.thingId, name: ctx.params.name };
        },
      },
      free: { handler: (ctx: Context) => ctx.params },
    },
  });
  beforeAll(() => broker.start());
  afterAll(() => broker.stop());

  it("hands the handler the parsed params", async () => {
    await expect(broker.call("things.get", { thingId: "12", name: "  lamp " })).resolves.toEqual({ id: 12, name: "lamp" });
  });

  it("refuses bad params before the handler runs, naming the field like parseInput", async () => {
    seen.length = 0;
    await expect(broker.call("things.get", { thingId: "012", name: "lamp" })).rejects.toMatchObject({ type: "invalid_request", message: expect.stringMatching(/^Invalid 'thingId': /) });
    await expect(broker.call("things.get", { thingId: 1, name: "lamp", extra: true })).rejects.toMatchObject({ message: "Invalid 'extra': is not a field of this request" });
    expect(seen).toEqual([]);
  });

  it("leaves actions without a declared input alone", async () => {
    await expect(broker.call("things.free", { anything: "01" })).resolves.toEqual({ anything: "01" });
  });
});

describe("the system's declarations", () => {
  const DECLARED = [ACCOUNTS, ATTRIBUTION, COMMISSIONS, GATEWAY, NOTIFICATIONS, PROCESSOR, PROGRAMS, REWARDS, SALES, STATUS, PORTAL];
  /** Actions (of the service schemas, not their mixins) that take no params, or check them in the handler (a raw webhook, an event parsed by type first). */
  const WITHOUT_INPUT = [
    "accounts.authenticatePartnerSession",
    "accounts.authenticateSession",
    "accounts.me",
    "gateway.health",
    "gateway.live",
    "gateway.logout",
    "gateway.paddleWebhook",
    "gateway.partnerSignOut",
    "gateway.processorWebhook",
    "notifications.commissionEvent",
    "notifications.event",
    "processor.handlePaddleWebhook",
    "processor.handleWebhook",
    "programs.authenticateKey",
  ];

  it("declares an input for every action of every service, but the few listed", () => {
    const declared = new Set(
      DECLARED.flatMap(({ service, actions }) =>
        Object.entries(actions)
          .filter(([, d]) => d.input)
          .map(([name]) => `${service}.${name}`),
      ),
    );
    const withoutInput: string[] = [];
    for (const name of ALL_SERVICES) {
      const schema = loadService(name) as { name: string; actions?: Record<string, unknown> };
      for (const action of Object.keys(schema.actions ?? {})) {
        const full = `${schema.name}.${action}`;
        if (!declared.has(full)) withoutInput.push(full);
      }
    }
    expect(withoutInput.sort()).toEqual(WITHOUT_INPUT);
  });

  it("declares only actions that exist", () => {
    const actions = new Set(
      ALL_SERVICES.flatMap((name) => {
        const schema = loadService(name) as { name: string; actions?: Record<string, unknown> };
        return Object.keys(schema.actions ?? {}).map((a) => `${schema.name}.${a}`);
      }),
    );
    const stale = DECLARED.flatMap(({ service, actions: a }) => Object.keys(a).map((n) => `${service}.${n}`)).filter((n) => !actions.has(n));
    expect(stale).toEqual([]);
  });
});
