/**
 * The pieces of the log lines: the format chosen from the environment, named
 * fields in JSON and in text, and the fields the gateway picks for a tracked
 * event or a refused request (chosen fields only: nothing from the body but a
 * program id).
 */
import { ServiceBroker } from "moleculer";
import { logFields, logFormatFromEnv, RequestAwareConsoleLogger } from "../../shared/observability";
import { outcomeOf, refusedRequestFields, trackedEventFields } from "../../services/gateway/request-log";

describe("log format from the environment", () => {
  it("is JSON in production and text otherwise, unless LOG_FORMAT says", () => {
    expect(logFormatFromEnv({ NODE_ENV: "production" })).toBe("json");
    expect(logFormatFromEnv({})).toBe("text");
    expect(logFormatFromEnv({ NODE_ENV: "development" })).toBe("text");
    expect(logFormatFromEnv({ NODE_ENV: "production", LOG_FORMAT: "text" })).toBe("text");
    expect(logFormatFromEnv({ LOG_FORMAT: "JSON" })).toBe("json");
    expect(() => logFormatFromEnv({ LOG_FORMAT: "pretty" })).toThrow(/LOG_FORMAT must be json or text/);
  });
});

describe("named fields in log lines", () => {
  async function logOnce(formatter: "json" | "short", ...args: unknown[]): Promise<string[]> {
    const lines: string[] = [];
    const broker = new ServiceBroker({
      nodeID: "unit-1",
      logger: new RequestAwareConsoleLogger({ formatter, colors: false, level: "info", sink: (_level, line) => lines.push(line) }) as never,
    });
    lines.length = 0;
    broker.getLogger("gateway").info(...args);
    return lines;
  }

  it("become JSON fields next to an ISO-8601 timestamp", async () => {
    const [line] = await logOnce("json", "sale tracked", logFields({ programId: 3, status: 200, outcome: "attributed", skipped: undefined }));
    const parsed = JSON.parse(line);
    expect(parsed).toMatchObject({ level: "info", msg: "sale tracked", programId: 3, status: 200, outcome: "attributed" });
    expect(parsed).not.toHaveProperty("skipped");
    expect(parsed.ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it("become key=value pairs in text, quoted when they hold spaces", async () => {
    const [line] = await logOnce("short", "request refused", logFields({ status: 400, code: "invalid_request", path: "/a b" }));
    expect(line).toMatch(/request refused status=400 code=invalid_request path="\/a b"$/);
  });
});

describe("the gateway's fields", () => {
  it("of a tracked event: request id, program (key's, else the body's), status and outcome", () => {
    const ctx = { requestID: "r-1", meta: { programId: 4 } };
    expect(
      trackedEventFields(
        "sales.track",
        ctx,
        { amount_cents: 100 },
        { attributed: true, sale_id: 9, amount_cents: 100, currency: "usd", commission_id: 2, commission_status: "pending", test: false },
      ),
    ).toEqual({
      event: "sale",
      requestId: "r-1",
      programId: 4,
      status: 200,
      outcome: "attributed",
      saleId: 9,
      amountCents: 100,
      currency: "usd",
      commissionId: 2,
      commissionStatus: "pending",
      test: false,
    });
    expect(trackedEventFields("attribution.trackClick", { requestID: "r-2", meta: {} }, { program_id: 7, referral_code: "x" }, { click_id: "clk_secret", test: true })).toEqual({
      event: "click",
      requestId: "r-2",
      programId: 7,
      status: 200,
      outcome: "recorded",
      test: true,
    });
    expect(trackedEventFields("programs.create", ctx, {}, {})).toBeNull();
  });

  it("of outcomes", () => {
    expect(outcomeOf("lead", { created: false, attributed: false })).toMatchObject({ outcome: "updated" });
    expect(outcomeOf("refund", { status: "skipped" })).toMatchObject({ outcome: "skipped" });
    expect(outcomeOf("processor_webhook", { received: true, duplicate: true })).toEqual({ outcome: "duplicate" });
    expect(outcomeOf("processor_webhook", { received: true, handled: false, rejected: true })).toEqual({ outcome: "rejected" });
    expect(outcomeOf("processor_webhook", { received: true, handled: true })).toEqual({ outcome: "processed" });
  });

  it("of a refused request: no query string, a program only when it is a number", () => {
    const fields = refusedRequestFields(
      { method: "POST", originalUrl: "/api/v1/track/click?token=abc", $alias: { action: "attribution.trackClick" }, $ctx: { requestID: "r-3", meta: {} }, body: { program_id: "1 OR 1=1" } },
      { status: 400, code: "invalid_request" },
    );
    expect(fields).toEqual({ event: "click", requestId: "r-3", programId: undefined, method: "POST", path: "/api/v1/track/click", status: 400, code: "invalid_request" });
  });
});
