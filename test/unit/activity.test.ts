/** The activity log's rules (shared/domain/audit.ts) and which writes the gateway records (services/gateway/activity.ts). */
import { RECORDED_WRITES } from "../../services/gateway/activity";
import { ENDPOINTS } from "../../services/gateway/declarations";
import { activityKindOf, parseActorFilter } from "../../shared/domain/audit";

test("every write on a program is recorded with a kind; a key route's kind is the area of its scope", () => {
  const programWrites = ENDPOINTS.filter((e) => e.action && e.http.method !== "GET" && /^\/api\/(programs\/:programId|admin\/programs\/:programId|v1)\//.test(e.http.path));
  const unrecorded = programWrites.filter((e) => !RECORDED_WRITES.has(`${e.http.method} ${e.http.path}`)).map((e) => e.action);
  // Tracking is the program's data; a reward's preview, a click's discount and an embed token change nothing.
  expect([...new Set(unrecorded)].sort()).toEqual([
    "accounts.createEmbedToken",
    "attribution.referredDiscount",
    "attribution.trackClick",
    "attribution.trackLead",
    "gateway.paddleWebhook",
    "gateway.processorWebhook",
    "rewards.preview",
    "sales.refund",
    "sales.track",
  ]);
  for (const e of ENDPOINTS.filter((e) => e.http.route === "program-api" && RECORDED_WRITES.has(`${e.http.method} ${e.http.path}`))) {
    const area = e.http.scope!.split(":")[0];
    expect({ path: e.http.path, kind: RECORDED_WRITES.get(`${e.http.method} ${e.http.path}`)!.kind }).toEqual({ path: e.http.path, kind: area });
  }
});

test("a path's kind: its first segment's, withdrawals and PayPal are payouts, the rest settings", () => {
  expect(activityKindOf("/partners/:partnerId/ban")).toBe("partners");
  expect(activityKindOf("/partners/:partnerId/withdrawals")).toBe("payouts");
  expect(activityKindOf("/processor/paypal")).toBe("payouts");
  expect(activityKindOf("/processor/api-key")).toBe("settings");
  expect(activityKindOf("/group-members")).toBe("rewards");
  expect(activityKindOf("/api-keys/:keyId/retire")).toBe("api_keys");
  expect(activityKindOf("")).toBe("settings");
});

test("the actor filter: user:<id>, api_key:<id> or operator", () => {
  expect(parseActorFilter("user:12")).toEqual({ actorType: "user", actorId: 12 });
  expect(parseActorFilter("api_key:3")).toEqual({ actorType: "api_key", actorId: 3 });
  expect(parseActorFilter("operator")).toEqual({ actorType: "operator", actorId: null });
  for (const bad of ["user", "user:0", "user:01", "api_key:2147483648", "operator:1", "partner:1", " user:1"]) expect(parseActorFilter(bad)).toBeNull();
});
