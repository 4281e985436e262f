import { createNotificationsRepository } from "../../services/notifications/storage";
import {
  UNSUBSCRIBED_REASON,
  type DeliveryStatus,
  type NewNotification,
  type NewPartnerActivity,
  type NewPartnerEmail,
  type NewWebhookEndpoint,
  type Notification,
  type NotificationsRepository,
  type PartnerActivity,
  type PartnerNoticeFilter,
} from "../../services/notifications/repository";
import { decodeCursor } from "../../shared/pagination";
import type { Database } from "../../shared/storage/database";
import { DAY, SECOND, at, backends, counter, useRepository } from "./harness";

const nextEvent = counter(1);
const nextProgram = counter(100);
const nextWorkspace = counter(500);

const notification = (over: Partial<NewNotification> = {}): NewNotification => ({
  eventId: nextEvent(),
  kind: "partner_notice",
  workspaceId: 1,
  programId: 1,
  partnerId: 7,
  commissionId: 11,
  transactionId: "txn_1",
  status: "refunded",
  deductionCents: 600,
  currency: "usd",
  reason: "customer refund",
  partnerPaid: false,
  ...over,
});

const endpoint = (over: Partial<NewWebhookEndpoint> = {}): NewWebhookEndpoint => ({
  workspaceId: nextWorkspace(),
  url: "https://merchant.example/hooks",
  description: null,
  eventTypes: ["commission.created", "commission.refunded", "commission.reversed"],
  secret: "whsec_test",
  ...over,
});

const eventIds = (list: Notification[]) => list.map((n) => n.eventId).sort((a, b) => a - b);

describe.each(backends)("notifications repository contract on %s", (_name, backend) => {
  let db: Database;
  const repo = useRepository<NotificationsRepository>(backend, (opened) => createNotificationsRepository((db = opened)));

  it("stores a notification once per event and kind", async () => {
    const programId = nextProgram();
    const input = notification({ programId });

    expect(await repo().insertOnce(input)).toBe(true);
    expect(await repo().insertOnce({ ...input, deductionCents: 999, reason: "changed" })).toBe(false);
    expect(await repo().insertOnce({ ...input, kind: "advertiser_warning", partnerPaid: true })).toBe(true);
    expect(await repo().insertOnce({ ...input, kind: "advertiser_warning" })).toBe(false);

    const stored = await repo().list({ programId, limit: 10 });
    expect(stored).toHaveLength(2);
    const notice = stored.find((n) => n.kind === "partner_notice")!;
    expect(Number.isInteger(notice.id)).toBe(true);
    expect(notice).toEqual({ ...input, id: notice.id, createdAt: expect.any(Date), readAt: null });
    expect(stored.find((n) => n.kind === "advertiser_warning")).toMatchObject({ partnerPaid: true });
  });

  it("round-trips a notification without a reason or workspace", async () => {
    const programId = nextProgram();
    const input = notification({ programId, workspaceId: null, reason: null, status: "reversed", deductionCents: 0, currency: "jpy", partnerPaid: true });
    await repo().insertOnce(input);
    expect(await repo().list({ programId, limit: 10 })).toEqual([{ ...input, id: expect.any(Number), createdAt: expect.any(Date), readAt: null }]);
  });

  it("inserts once when the same event is delivered concurrently", async () => {
    const programId = nextProgram();
    const input = notification({ programId });
    const results = await Promise.all(Array.from({ length: 8 }, () => repo().insertOnce(input)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await repo().list({ programId, limit: 10 })).toHaveLength(1);
  });

  it("filters by program, partner and kind, and caps at the limit", async () => {
    const programId = nextProgram();
    const other = nextProgram();
    const a = notification({ programId, partnerId: 1, kind: "partner_notice" });
    const b = notification({ programId, partnerId: 2, kind: "partner_notice" });
    const c = notification({ programId, partnerId: 1, kind: "advertiser_warning" });
    const d = notification({ programId: other, partnerId: 1, kind: "partner_notice" });
    for (const n of [a, b, c, d]) expect(await repo().insertOnce(n)).toBe(true);

    expect(eventIds(await repo().list({ programId, limit: 10 }))).toEqual([a.eventId, b.eventId, c.eventId]);
    expect(eventIds(await repo().list({ programId, partnerId: 1, limit: 10 }))).toEqual([a.eventId, c.eventId]);
    expect(eventIds(await repo().list({ programId, kind: "advertiser_warning", limit: 10 }))).toEqual([c.eventId]);
    expect(eventIds(await repo().list({ programId, partnerId: 1, kind: "partner_notice", limit: 10 }))).toEqual([a.eventId]);
    expect(eventIds(await repo().list({ programId: other, limit: 10 }))).toEqual([d.eventId]);
    expect(await repo().list({ programId, partnerId: 3, limit: 10 })).toEqual([]);
    expect(await repo().list({ programId, limit: 2 })).toHaveLength(2);

    const everywhere = await repo().list({ limit: 1000 });
    expect(eventIds(everywhere)).toEqual(expect.arrayContaining([a.eventId, b.eventId, c.eventId, d.eventId]));
    const partnerOne = await repo().list({ partnerId: 1, limit: 1000 });
    expect(partnerOne.every((n) => n.partnerId === 1)).toBe(true);
    expect(eventIds(partnerOne)).toEqual(expect.arrayContaining([a.eventId, c.eventId, d.eventId]));
  });

  it("lists a workspace's notifications newest first, pages back with beforeId, filters unread", async () => {
    const workspaceId = nextWorkspace();
    const stored: number[] = [];
    for (let i = 0; i < 5; i++) {
      const n = notification({ workspaceId, programId: nextProgram(), kind: i % 2 ? "advertiser_warning" : "partner_notice" });
      await repo().insertOnce(n);
      stored.push(n.eventId);
    }
    await repo().insertOnce(notification({ workspaceId: nextWorkspace() }));

    const all = await repo().list({ workspaceId, limit: 10 });
    expect(all.map((n) => n.eventId)).toEqual([...stored].reverse());
    expect(all.map((n) => n.id)).toEqual([...all.map((n) => n.id)].sort((x, y) => y - x));
    const firstPage = await repo().list({ workspaceId, limit: 2 });
    const secondPage = await repo().list({ workspaceId, beforeId: firstPage[1].id, limit: 2 });
    const lastPage = await repo().list({ workspaceId, beforeId: secondPage[1].id, limit: 2 });
    expect([...firstPage, ...secondPage, ...lastPage].map((n) => n.id)).toEqual(all.map((n) => n.id));

    await repo().markRead(workspaceId, all[0].id, at());
    expect((await repo().list({ workspaceId, unread: true, limit: 10 })).map((n) => n.id)).toEqual(all.slice(1).map((n) => n.id));
    expect((await repo().list({ workspaceId, unread: false, limit: 10 })).map((n) => n.id)).toEqual([all[0].id]);
  });

  it("counts unread per kind; marks one read (keeping the first time) and all read, only in the workspace", async () => {
    const workspaceId = nextWorkspace();
    const otherWorkspace = nextWorkspace();
    const notices = [notification({ workspaceId }), notification({ workspaceId }), notification({ workspaceId, kind: "advertiser_warning" })];
    for (const n of notices) await repo().insertOnce(n);
    await repo().insertOnce(notification({ workspaceId: otherWorkspace }));
    expect(await repo().unreadCounts(workspaceId)).toEqual({ partner_notice: 2, advertiser_warning: 1 });
    expect(await repo().unreadCounts(nextWorkspace())).toEqual({ partner_notice: 0, advertiser_warning: 0 });

    const [newest] = await repo().list({ workspaceId, kind: "partner_notice", limit: 1 });
    expect(await repo().markRead(otherWorkspace, newest.id, at())).toBeNull();
    expect(await repo().markRead(workspaceId, 2_000_000_000, at())).toBeNull();
    expect(await repo().markRead(workspaceId, newest.id, at())).toEqual({ ...newest, readAt: at() });
    expect((await repo().markRead(workspaceId, newest.id, at(5 * SECOND)))!.readAt).toEqual(at());
    expect(await repo().unreadCounts(workspaceId)).toEqual({ partner_notice: 1, advertiser_warning: 1 });

    expect(await repo().markAllRead(workspaceId, "advertiser_warning", at(SECOND))).toBe(1);
    expect(await repo().unreadCounts(workspaceId)).toEqual({ partner_notice: 1, advertiser_warning: 0 });
    expect(await repo().markAllRead(workspaceId, undefined, at(2 * SECOND))).toBe(1);
    expect(await repo().markAllRead(workspaceId, undefined, at(3 * SECOND))).toBe(0);
    expect(await repo().unreadCounts(workspaceId)).toEqual({ partner_notice: 0, advertiser_warning: 0 });
    expect((await repo().list({ workspaceId, limit: 10 })).map((n) => n.readAt)).toEqual([at(SECOND), at(), at(2 * SECOND)]);
    expect(await repo().unreadCounts(otherWorkspace)).toEqual({ partner_notice: 1, advertiser_warning: 0 });

    // The counts are kept beside the notifications (notifications_unread); reconcile's recount finds a count changed behind their back.
    expect(await repo().rollupDrift(100)).toEqual([]);
    const bump = async (by: number) => {
      if (db.kind === "sql") await db.sql.query("UPDATE notifications_unread SET unread = unread + $2 WHERE workspace_id = $1 AND kind = 'partner_notice'", [otherWorkspace, by]);
      else await db.mongo.collection("notifications_unread").updateOne({ workspaceId: otherWorkspace, kind: "partner_notice" }, { $inc: { unread: by } });
    };
    await bump(2);
    expect(await repo().unreadCounts(otherWorkspace)).toEqual({ partner_notice: 3, advertiser_warning: 0 });
    expect(await repo().rollupDrift(100)).toEqual([{ rollup: "notifications_unread", key: `workspace ${otherWorkspace} partner_notice`, stored: { unread: 3 }, counted: { unread: 1 } }]);
    await bump(-2);
    expect(await repo().rollupDrift(100)).toEqual([]);
  });

  describe("webhook endpoints", () => {
    it("an endpoint bound to a program (made with an API key) is listed for that program alone", async () => {
      const bound = await repo().createEndpoint({ ...endpoint(), programId: 9 }, at());
      const workspaceWide = await repo().createEndpoint({ ...endpoint(), workspaceId: bound.workspaceId }, at());
      expect(bound.programId).toBe(9);
      expect((await repo().getEndpoint(bound.id))?.programId).toBe(9);
      expect((await repo().listEndpoints(bound.workspaceId, 9)).map((e) => e.id)).toEqual([bound.id]);
      expect((await repo().listEndpoints(bound.workspaceId)).map((e) => e.id)).toEqual([bound.id, workspaceWide.id]);
    });

    it("creates, reads and lists endpoints per workspace; the read model has no secret", async () => {
      const input = endpoint({ description: "Orders system", eventTypes: ["commission.reversed"] });
      const created = await repo().createEndpoint(input, at());
      expect(created).toEqual({
        id: expect.any(Number),
        workspaceId: input.workspaceId,
        programId: null,
        partnerId: null,
        url: input.url,
        description: "Orders system",
        eventTypes: ["commission.reversed"],
        enabled: true,
        consecutiveFailures: 0,
        disabledAt: null,
        disabledReason: null,
        previousSecretExpiresAt: null,
        createdAt: at(),
        updatedAt: at(),
      });
      expect(await repo().getEndpoint(created.id)).toEqual(created);
      expect(await repo().getEndpoint(2_000_000_000)).toBeNull();
      const second = await repo().createEndpoint({ ...endpoint(), workspaceId: input.workspaceId }, at(SECOND));
      await repo().createEndpoint(endpoint(), at());
      expect((await repo().listEndpoints(input.workspaceId)).map((e) => e.id)).toEqual([created.id, second.id]);
    });

    it("lists the enabled endpoints subscribed to an event type", async () => {
      const workspaceId = nextWorkspace();
      const all = await repo().createEndpoint(endpoint({ workspaceId }), at());
      const reversedOnly = await repo().createEndpoint(endpoint({ workspaceId, eventTypes: ["commission.reversed"] }), at());
      const disabled = await repo().createEndpoint(endpoint({ workspaceId }), at());
      await repo().setEndpointEnabled(disabled.id, false, "test", at());
      await repo().createEndpoint(endpoint(), at());
      expect((await repo().listSubscribedEndpoints(workspaceId, "commission.created")).map((e) => e.id)).toEqual([all.id]);
      expect((await repo().listSubscribedEndpoints(workspaceId, "commission.reversed")).map((e) => e.id)).toEqual([all.id, reversedOnly.id]);
    });

    it("keeps a partner's postbacks apart: listed by (program, partner), never as the merchant's, subscribed for that partner only", async () => {
      const workspaceId = nextWorkspace();
      const programId = nextProgram();
      const merchant = await repo().createEndpoint(endpoint({ workspaceId }), at());
      const postback = await repo().createEndpoint(endpoint({ workspaceId, programId, partnerId: 7, url: "https://partner.example/pb", eventTypes: ["commission.created"] }), at());
      expect(postback).toMatchObject({ workspaceId, programId, partnerId: 7, url: "https://partner.example/pb", enabled: true });
      expect(await repo().getEndpoint(postback.id)).toEqual(postback);
      const second = await repo().createEndpoint(endpoint({ workspaceId, programId, partnerId: 7, eventTypes: ["commission.reversed"] }), at());
      const otherPartner = await repo().createEndpoint(endpoint({ workspaceId, programId, partnerId: 8, eventTypes: ["commission.created"] }), at());
      const otherProgram = await repo().createEndpoint(endpoint({ workspaceId, programId: nextProgram(), partnerId: 7, eventTypes: ["commission.created"] }), at());
      const ids = (list: Array<{ id: number }>) => list.map((e) => e.id);

      expect(ids(await repo().listPartnerPostbacks(programId, 7))).toEqual([postback.id, second.id]);
      expect(ids(await repo().listPartnerPostbacks(programId, 8))).toEqual([otherPartner.id]);
      expect(await repo().listPartnerPostbacks(programId, 9)).toEqual([]);
      // The merchant's list has their own endpoints only, also when asked for the program.
      expect(ids(await repo().listEndpoints(workspaceId))).toEqual([merchant.id]);
      expect(await repo().listEndpoints(workspaceId, programId)).toEqual([]);

      // Without a partner: the merchant's endpoints only; with one, also that partner's postbacks in that program.
      expect(ids(await repo().listSubscribedEndpoints(workspaceId, "commission.created"))).toEqual([merchant.id]);
      expect(ids(await repo().listSubscribedEndpoints(workspaceId, "commission.created", { programId, partnerId: 7 }))).toEqual([merchant.id, postback.id]);
      expect(ids(await repo().listSubscribedEndpoints(workspaceId, "commission.reversed", { programId, partnerId: 7 }))).toEqual([merchant.id, second.id]);
      expect(ids(await repo().listSubscribedEndpoints(workspaceId, "commission.created", { programId, partnerId: 8 }))).toEqual([merchant.id, otherPartner.id]);
      expect(ids(await repo().listSubscribedEndpoints(workspaceId, "commission.created", { programId, partnerId: 9 }))).toEqual([merchant.id]);
      expect(otherProgram.partnerId).toBe(7);
      // A disabled postback gets nothing.
      await repo().setEndpointEnabled(postback.id, false, "paused", at(SECOND));
      expect(ids(await repo().listSubscribedEndpoints(workspaceId, "commission.created", { programId, partnerId: 7 }))).toEqual([merchant.id]);
      expect(ids(await repo().listPartnerPostbacks(programId, 7))).toEqual([postback.id, second.id]);
    });

    it("disables (keeping the first reason) and enables (clearing failures)", async () => {
      const e = await repo().createEndpoint(endpoint(), at());
      expect(await repo().recordEndpointOutcome(e.id, false, 10, at())).toEqual({ disabled: false });
      const off = await repo().setEndpointEnabled(e.id, false, "maintenance", at(SECOND));
      expect(off).toMatchObject({ enabled: false, disabledAt: at(SECOND), disabledReason: "maintenance", consecutiveFailures: 1 });
      expect(await repo().setEndpointEnabled(e.id, false, "again", at(2 * SECOND))).toMatchObject({ disabledAt: at(SECOND), disabledReason: "maintenance" });
      const on = await repo().setEndpointEnabled(e.id, true, null, at(3 * SECOND));
      expect(on).toMatchObject({ enabled: true, disabledAt: null, disabledReason: null, consecutiveFailures: 0, updatedAt: at(3 * SECOND) });
      expect(await repo().setEndpointEnabled(2_000_000_000, true, null, at())).toBeNull();
    });

    it("counts consecutive failed deliveries, resets on success, disables at the limit once", async () => {
      const e = await repo().createEndpoint(endpoint(), at());
      await repo().recordEndpointOutcome(e.id, false, 3, at());
      await repo().recordEndpointOutcome(e.id, false, 3, at());
      await repo().recordEndpointOutcome(e.id, true, 3, at());
      expect((await repo().getEndpoint(e.id))!.consecutiveFailures).toBe(0);

      const results = await Promise.all(Array.from({ length: 5 }, () => repo().recordEndpointOutcome(e.id, false, 3, at(SECOND))));
      expect(results.filter((r) => r.disabled)).toHaveLength(1);
      expect(await repo().getEndpoint(e.id)).toMatchObject({
        enabled: false,
        consecutiveFailures: 5,
        disabledAt: at(SECOND),
        disabledReason: expect.stringContaining("consecutive failed deliveries"),
      });
    });
  });

  describe("webhook deliveries", () => {
    const newEndpoint = async (over: Partial<NewWebhookEndpoint> = {}) => repo().createEndpoint(endpoint(over), at());
    const delivery = (endpointId: number, eventId = nextEvent()) => ({
      endpointId,
      eventId,
      eventType: "commission.created" as const,
      body: JSON.stringify({ id: eventId, type: "commission.created", data: { amountCents: 2000 } }),
    });
    /** The endpoint's delivery log (one page: these tests make few). */
    const logOf = async (endpointId: number, status?: DeliveryStatus) => (await repo().listDeliveries({ endpointId, status, limit: 100 })).data;
    /** Claims everything due and keeps this test's deliveries (other tests' leftovers share the database). */
    const claimFor = async (endpointIds: number[], worker: string, now: Date, leaseMs = 30 * SECOND) =>
      (await repo().claimDeliveries(worker, leaseMs, 1000, now)).filter((d) => endpointIds.includes(d.endpointId));

    it("enqueues once per (producer, event, endpoint), also concurrently", async () => {
      const e = await newEndpoint();
      const other = await newEndpoint();
      const d = delivery(e.id);
      expect(await repo().enqueueDelivery(d, at())).toBe(true);
      expect(await repo().enqueueDelivery({ ...d, body: "{}" }, at())).toBe(false);
      expect(await repo().enqueueDelivery({ ...d, endpointId: other.id }, at())).toBe(true);
      // The same outbox id from another producer is another event (ids are per producer).
      expect(await repo().enqueueDelivery({ ...d, endpointId: other.id, producer: "sales", eventType: "sale.created" }, at())).toBe(true);
      expect(await repo().enqueueDelivery({ ...d, endpointId: other.id, producer: "sales", eventType: "sale.created" }, at())).toBe(false);
      expect((await logOf(other.id)).map((x) => [x.producer, x.eventId])).toEqual([
        ["sales", d.eventId],
        ["commissions", d.eventId],
      ]);
      const d2 = delivery(e.id);
      const results = await Promise.all(Array.from({ length: 8 }, () => repo().enqueueDelivery(d2, at())));
      expect(results.filter(Boolean)).toHaveLength(1);

      const listed = await logOf(e.id);
      expect(listed.map((x) => x.eventId)).toEqual([d2.eventId, d.eventId]);
      expect(listed[1]).toEqual({
        id: expect.any(Number),
        endpointId: e.id,
        producer: "commissions",
        eventId: d.eventId,
        eventType: "commission.created",
        body: d.body,
        status: "pending",
        attempts: 0,
        nextAttemptAt: at(),
        lastStatusCode: null,
        lastError: null,
        deliveredAt: null,
        retriedAt: null,
        createdAt: at(),
        attemptLog: [],
      });
    });

    it("claims due deliveries of enabled endpoints with a lease, counting an attempt, with the endpoint's url and secret", async () => {
      const e = await newEndpoint({ url: "https://a.example/hook", secret: "whsec_a" });
      const off = await newEndpoint();
      const d = delivery(e.id);
      await repo().enqueueDelivery(d, at());
      await repo().enqueueDelivery(delivery(off.id), at());
      await repo().setEndpointEnabled(off.id, false, "test", at());

      const [claimed, ...rest] = await claimFor([e.id, off.id], "w1", at(SECOND));
      expect(rest).toEqual([]);
      expect(claimed).toMatchObject({ eventId: d.eventId, attempts: 1, url: "https://a.example/hook", secret: "whsec_a", body: d.body });
      // Held by w1 until the lease ends.
      expect(await claimFor([e.id], "w2", at(2 * SECOND))).toEqual([]);
      const reclaimed = await claimFor([e.id], "w2", at(32 * SECOND));
      expect(reclaimed.map((x) => [x.id, x.attempts])).toEqual([[claimed.id, 2]]);
    });

    it("gives each of several concurrent workers different deliveries", async () => {
      const e = await newEndpoint();
      for (let i = 0; i < 12; i++) await repo().enqueueDelivery(delivery(e.id), at());
      const claims = await Promise.all(Array.from({ length: 4 }, async (_, w) => (await repo().claimDeliveries(`w${w}`, 30 * SECOND, 3, at(SECOND))).filter((d) => d.endpointId === e.id)));
      const more = await claimFor([e.id], "w9", at(SECOND));
      const ids = [...claims.flat(), ...more].map((d) => d.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toHaveLength(12);
    });

    it("records attempts: a retry waits for its time, success and failure end the delivery, a lost claim only logs", async () => {
      const e = await newEndpoint();
      const d = delivery(e.id);
      await repo().enqueueDelivery(d, at());

      const [first] = await claimFor([e.id], "w1", at(SECOND));
      await repo().recordAttempt(
        first.id,
        "w1",
        { attempt: 1, at: at(SECOND), statusCode: 500, error: "HTTP 500", responseExcerpt: "Internal Server Error", durationMs: 12 },
        { status: "pending", retryAt: at(10 * SECOND) },
      );
      expect(await claimFor([e.id], "w1", at(9 * SECOND))).toEqual([]);

      const [second] = await claimFor([e.id], "w2", at(10 * SECOND));
      expect(second.attempts).toBe(2);
      // w1's lease is gone: a late record from it logs its attempt but does not move the delivery.
      await repo().recordAttempt(first.id, "w1", { attempt: 9, at: at(10 * SECOND), statusCode: 200, error: null, responseExcerpt: null, durationMs: 1 }, { status: "succeeded" });
      await repo().recordAttempt(second.id, "w2", { attempt: 2, at: at(11 * SECOND), statusCode: 204, error: null, responseExcerpt: null, durationMs: 30 }, { status: "succeeded" });

      const [listed] = await logOf(e.id);
      expect(listed).toMatchObject({ status: "succeeded", attempts: 2, lastStatusCode: 204, lastError: null, deliveredAt: at(11 * SECOND) });
      expect(listed.attemptLog).toEqual([
        { attempt: 1, at: at(SECOND), statusCode: 500, error: "HTTP 500", responseExcerpt: "Internal Server Error", durationMs: 12 },
        { attempt: 2, at: at(11 * SECOND), statusCode: 204, error: null, responseExcerpt: null, durationMs: 30 },
        { attempt: 9, at: at(10 * SECOND), statusCode: 200, error: null, responseExcerpt: null, durationMs: 1 },
      ]);
      expect(await claimFor([e.id], "w3", at(100 * SECOND))).toEqual([]);

      const failing = delivery(e.id);
      await repo().enqueueDelivery(failing, at());
      const [f] = await claimFor([e.id], "w1", at(SECOND));
      await repo().recordAttempt(f.id, "w1", { attempt: 1, at: at(SECOND), statusCode: null, error: "ECONNREFUSED", responseExcerpt: null, durationMs: 3 }, { status: "failed" });
      expect(await claimFor([e.id], "w1", at(100 * SECOND))).toEqual([]);
      const failed = await logOf(e.id, "failed");
      expect(failed).toEqual([expect.objectContaining({ eventId: failing.eventId, status: "failed", lastStatusCode: null, lastError: "ECONNREFUSED", deliveredAt: null })]);
      expect((await logOf(e.id, "succeeded")).map((x) => x.eventId)).toEqual([d.eventId]);
      expect(await logOf(e.id, "pending")).toEqual([]);
    });

    it("rotates the signing secret: claims carry the previous one until it expires; the one before it ends at once", async () => {
      const e = await newEndpoint({ secret: "whsec_one" });
      /** Claims the endpoint's due deliveries at `now` and records each as delivered, so later claims see only new ones. */
      const claimAndDeliver = async (now: Date) => {
        const claimed = await claimFor([e.id], "w1", now);
        for (const d of claimed)
          await repo().recordAttempt(d.id, "w1", { attempt: d.attempts, at: now, statusCode: 200, error: null, responseExcerpt: null, durationMs: 1 }, { status: "succeeded" });
        return claimed;
      };
      await repo().enqueueDelivery(delivery(e.id), at());
      expect((await claimAndDeliver(at(SECOND))).map((d) => [d.secret, d.previousSecret, d.attemptBase])).toEqual([["whsec_one", null, 0]]);

      const rotated = await repo().rotateEndpointSecret(e.id, "whsec_two", at(DAY), at(2 * SECOND));
      expect(rotated).toEqual({ ...e, previousSecretExpiresAt: at(DAY), updatedAt: at(2 * SECOND) });
      expect(await repo().getEndpoint(e.id)).toEqual(rotated);
      await repo().enqueueDelivery(delivery(e.id), at());
      expect((await claimAndDeliver(at(3 * SECOND))).map((d) => [d.secret, d.previousSecret])).toEqual([["whsec_two", "whsec_one"]]);

      // Again within the window: the first secret is gone, the second is the previous one.
      await repo().rotateEndpointSecret(e.id, "whsec_three", at(DAY + 4 * SECOND), at(4 * SECOND));
      await repo().enqueueDelivery(delivery(e.id), at());
      expect((await claimAndDeliver(at(5 * SECOND))).map((d) => [d.secret, d.previousSecret])).toEqual([["whsec_three", "whsec_two"]]);
      // Past the window: the new secret only.
      await repo().enqueueDelivery(delivery(e.id), at());
      expect((await claimAndDeliver(at(DAY + 4 * SECOND))).map((d) => [d.secret, d.previousSecret])).toEqual([["whsec_three", null]]);

      // Concurrent rotations apply one after the other: the last one's previous secret is one of the others.
      const secrets = ["whsec_a", "whsec_b", "whsec_c", "whsec_d", "whsec_e"];
      await Promise.all(secrets.map((secret) => repo().rotateEndpointSecret(e.id, secret, at(3 * DAY), at(2 * DAY))));
      await repo().enqueueDelivery(delivery(e.id), at(2 * DAY));
      const [last] = await claimAndDeliver(at(2 * DAY));
      expect(secrets).toContain(last.secret);
      expect(secrets.filter((x) => x !== last.secret)).toContain(last.previousSecret);

      expect(await repo().rotateEndpointSecret(2_000_000_000, "whsec_x", at(DAY), at())).toBeNull();
    });

    it("enqueues test deliveries: a fresh event id each, the body made from it, due at once like any delivery", async () => {
      const e = await newEndpoint();
      const body = (eventId: number) => JSON.stringify({ id: `test:${eventId}`, type: "test.ping" });
      const first = await repo().enqueueTestDelivery(e.id, body, at());
      expect(first).toEqual({
        id: expect.any(Number),
        endpointId: e.id,
        producer: "test",
        eventId: expect.any(Number),
        eventType: "test.ping",
        body: body(first.eventId),
        status: "pending",
        attempts: 0,
        nextAttemptAt: at(),
        lastStatusCode: null,
        lastError: null,
        deliveredAt: null,
        retriedAt: null,
        createdAt: at(),
      });
      const more = await Promise.all(Array.from({ length: 4 }, () => repo().enqueueTestDelivery(e.id, body, at())));
      const eventIds = [first, ...more].map((d) => d.eventId);
      expect(new Set(eventIds).size).toBe(5);
      expect((await logOf(e.id)).map((d) => d.id).sort((a, b) => a - b)).toEqual([first, ...more].map((d) => d.id).sort((a, b) => a - b));
      expect(await repo().getDelivery(e.id, first.id)).toEqual({ ...first, attemptLog: [] });
      const claimed = await claimFor([e.id], "w1", at(SECOND));
      expect(claimed.map((d) => [d.eventType, d.producer, d.attempts])).toEqual(Array.from({ length: 5 }, () => ["test.ping", "test", 1]));
    });

    it("retries a failed delivery with a fresh allowance; a pending or succeeded one is left alone; one of concurrent retries wins", async () => {
      const e = await newEndpoint();
      await repo().enqueueDelivery(delivery(e.id), at());
      const [claimed] = await claimFor([e.id], "w1", at(SECOND));
      const failedAttempt = { attempt: 1, at: at(SECOND), statusCode: 500, error: "HTTP 500", responseExcerpt: "down", durationMs: 5 };
      await repo().recordAttempt(claimed.id, "w1", failedAttempt, { status: "failed" });
      const failed = (await repo().getDelivery(e.id, claimed.id))!;
      expect(failed).toMatchObject({ status: "failed", attempts: 1, retriedAt: null, attemptLog: [failedAttempt] });

      const retried = await repo().retryDelivery(e.id, claimed.id, at(10 * SECOND));
      expect(retried).toEqual({ retried: true, delivery: { ...failed, status: "pending", nextAttemptAt: at(10 * SECOND), retriedAt: at(10 * SECOND) } });
      // Again while pending: nothing changes.
      expect(await repo().retryDelivery(e.id, claimed.id, at(11 * SECOND))).toEqual({ retried: false, delivery: retried!.delivery });
      // w1's claim ended with the failure: a late record from it does not move the retried delivery.
      await repo().recordAttempt(claimed.id, "w1", { ...failedAttempt, attempt: 7 }, { status: "succeeded" });
      expect((await repo().getDelivery(e.id, claimed.id))!.status).toBe("pending");

      expect(await claimFor([e.id], "w2", at(9 * SECOND))).toEqual([]);
      const [again] = await claimFor([e.id], "w2", at(10 * SECOND));
      expect([again.id, again.attempts, again.attemptBase]).toEqual([claimed.id, 2, 1]);
      expect((await repo().retryDelivery(e.id, claimed.id, at(12 * SECOND)))!.retried).toBe(false);
      await repo().recordAttempt(again.id, "w2", { attempt: 2, at: at(12 * SECOND), statusCode: 200, error: null, responseExcerpt: null, durationMs: 3 }, { status: "succeeded" });
      const succeeded = await repo().retryDelivery(e.id, claimed.id, at(13 * SECOND));
      expect(succeeded).toMatchObject({ retried: false, delivery: { status: "succeeded", attempts: 2, retriedAt: at(10 * SECOND), deliveredAt: at(12 * SECOND) } });
      expect(succeeded!.delivery.attemptLog.map((a) => a.attempt)).toEqual([1, 2, 7]);

      // Another endpoint's delivery, or none, is not found.
      const other = await newEndpoint();
      expect(await repo().retryDelivery(other.id, claimed.id, at())).toBeNull();
      expect(await repo().getDelivery(other.id, claimed.id)).toBeNull();
      expect(await repo().retryDelivery(e.id, 2_000_000_000, at())).toBeNull();

      // Concurrent retries of one failed delivery: one retries it.
      await repo().enqueueDelivery(delivery(e.id), at());
      const [next] = await claimFor([e.id], "w3", at(20 * SECOND));
      await repo().recordAttempt(next.id, "w3", { ...failedAttempt, at: at(20 * SECOND) }, { status: "failed" });
      const results = await Promise.all(Array.from({ length: 5 }, () => repo().retryDelivery(e.id, next.id, at(21 * SECOND))));
      expect(results.filter((r) => r!.retried)).toHaveLength(1);
      expect(results.every((r) => r!.delivery.status === "pending")).toBe(true);
    });

    it("pages the delivery log newest first, by status and creation time", async () => {
      const e = await newEndpoint();
      for (let i = 0; i < 5; i++) await repo().enqueueDelivery(delivery(e.id), at(i * SECOND));
      // Two in the same instant: ids break the tie.
      await repo().enqueueDelivery(delivery(e.id), at(4 * SECOND));
      const all = await logOf(e.id);
      expect(all).toHaveLength(6);
      expect(all.map((d) => d.createdAt.getTime())).toEqual([...all.map((d) => d.createdAt.getTime())].sort((a, b) => b - a));
      const pages: number[][] = [];
      let cursor: string | null | undefined;
      do {
        const page = await repo().listDeliveries({ endpointId: e.id, limit: 4, cursor: cursor ? decodeCursor(cursor)! : undefined });
        pages.push(page.data.map((d) => d.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect(pages.map((p) => p.length)).toEqual([4, 2]);
      expect(pages.flat()).toEqual(all.map((d) => d.id));
      expect((await repo().listDeliveries({ endpointId: e.id, limit: 6 })).nextCursor).toBeNull();

      const [oldest] = await claimFor([e.id], "w1", at(10 * SECOND)).then((c) => c.filter((d) => d.id === all[5].id));
      await repo().recordAttempt(oldest.id, "w1", { attempt: 1, at: at(10 * SECOND), statusCode: null, error: "ECONNREFUSED", responseExcerpt: null, durationMs: 1 }, { status: "failed" });
      expect((await logOf(e.id, "failed")).map((d) => d.id)).toEqual([oldest.id]);
      const range = await repo().listDeliveries({ endpointId: e.id, limit: 10, from: at(SECOND), to: at(3 * SECOND) });
      expect(range.data.map((d) => d.createdAt)).toEqual([at(2 * SECOND), at(SECOND)]);
    });

    it("keeps pending deliveries of a disabled endpoint until it is enabled again", async () => {
      const e = await newEndpoint();
      const d = delivery(e.id);
      await repo().enqueueDelivery(d, at());
      await repo().setEndpointEnabled(e.id, false, "test", at());
      expect(await claimFor([e.id], "w1", at(SECOND))).toEqual([]);
      await repo().setEndpointEnabled(e.id, true, null, at());
      expect((await claimFor([e.id], "w1", at(SECOND))).map((x) => x.eventId)).toEqual([d.eventId]);
    });
  });
});

describe.each(backends)("notifications repository contract on %s: a partner's own notices", (_name, backend) => {
  const repo = useRepository<NotificationsRepository>(backend, createNotificationsRepository);

  it("lists only the partner's notices in the program, newest first, with the partner's own read state", async () => {
    const programId = nextProgram();
    const otherProgram = nextProgram();
    await repo().insertOnce(notification({ programId, partnerId: 21, transactionId: "a" }));
    await repo().insertOnce(notification({ programId, partnerId: 21, transactionId: "b" }));
    await repo().insertOnce(notification({ programId, partnerId: 21, transactionId: "w", kind: "advertiser_warning", partnerPaid: true }));
    await repo().insertOnce(notification({ programId, partnerId: 22, transactionId: "other partner" }));
    await repo().insertOnce(notification({ programId: otherProgram, partnerId: 21, transactionId: "other program" }));

    const ids = async (f: Partial<PartnerNoticeFilter>) => (await repo().listPartnerNotices({ partnerId: 21, programId, limit: 10, ...f })).data.map((n) => n.transactionId);
    const { data: mine, nextCursor } = await repo().listPartnerNotices({ partnerId: 21, programId, limit: 10 });
    expect(nextCursor).toBeNull();
    expect(mine.map((n) => n.transactionId)).toEqual(["b", "a"]);
    expect(mine.every((n) => n.kind === "partner_notice" && n.partnerReadAt === null)).toBe(true);
    const first = await repo().listPartnerNotices({ partnerId: 21, programId, limit: 1 });
    expect(first.data.map((n) => n.transactionId)).toEqual(["b"]);
    expect(await ids({ cursor: decodeCursor(first.nextCursor!)! })).toEqual(["a"]);

    const read = await repo().markPartnerNoticeRead(21, programId, mine[1].id, at());
    expect(read).toEqual({ ...mine[1], partnerReadAt: at() });
    expect((await repo().markPartnerNoticeRead(21, programId, mine[1].id, at(5 * SECOND)))!.partnerReadAt).toEqual(at());
    expect(await ids({ unread: true })).toEqual(["b"]);
    expect(await ids({ unread: false })).toEqual(["a"]);
    // The workspace inbox keeps its own read state.
    expect((await repo().list({ programId, partnerId: 21, kind: "partner_notice", limit: 10 })).every((n) => n.readAt === null)).toBe(true);
  });

  it("marks nothing that is not the partner's own notice in that program", async () => {
    const programId = nextProgram();
    await repo().insertOnce(notification({ programId, partnerId: 31 }));
    await repo().insertOnce(notification({ programId, partnerId: 31, kind: "advertiser_warning", partnerPaid: true }));
    const [notice] = (await repo().listPartnerNotices({ partnerId: 31, programId, limit: 10 })).data;
    const [warning] = await repo().list({ programId, kind: "advertiser_warning", limit: 10 });
    expect(await repo().markPartnerNoticeRead(32, programId, notice.id, at())).toBeNull();
    expect(await repo().markPartnerNoticeRead(31, nextProgram(), notice.id, at())).toBeNull();
    expect(await repo().markPartnerNoticeRead(31, programId, warning.id, at())).toBeNull();
    expect(await repo().markPartnerNoticeRead(31, programId, 9_999_999, at())).toBeNull();
    expect((await repo().listPartnerNotices({ partnerId: 31, programId, limit: 10 })).data[0].partnerReadAt).toBeNull();
  });
});

describe.each(backends)("notifications repository contract on %s: partner emails", (_name, backend) => {
  const repo = useRepository<NotificationsRepository>(backend, createNotificationsRepository);
  /** An event's email (a refund's): pending, to pat@example.com, with an unsubscribe token. */
  const partnerEmail = (over: Partial<NewPartnerEmail> = {}): NewPartnerEmail => {
    const eventId = nextEvent();
    return {
      dedupeKey: `commission_reduced.commissions.${eventId}`,
      producer: "commissions",
      eventId,
      kind: "commission_reduced",
      category: "refunds",
      programId: 1,
      partnerId: 7,
      withdrawalId: null,
      recipient: "pat@example.com",
      fromName: "Acme Partners",
      replyTo: "partners@acme.example",
      subject: "A commission was reduced",
      text: "Your commission was reduced by 6.00 USD.",
      html: "<p>Your commission was reduced by 6.00 USD.</p>",
      messageId: `<commission_reduced.commissions.${eventId}@localhost>`,
      unsubscribeToken: `unsub-${eventId}`,
      status: "pending",
      skipReason: null,
      ...over,
    };
  };
  const record = async (over: Partial<NewPartnerEmail> = {}, now = at()) => {
    const e = partnerEmail(over);
    expect(await repo().recordPartnerEmail(e, now)).toBe(true);
    return (await repo().listPartnerEmails({ programId: e.programId, limit: 1000 })).find((x) => x.dedupeKey === e.dedupeKey)!;
  };
  /** Claims everything due and keeps the program's emails (other tests' leftovers share the database). */
  const claimOf = async (programId: number, worker: string, now: Date, leaseMs = 30 * SECOND) =>
    (await repo().claimPartnerEmails(worker, leaseMs, 1000, now)).filter((e) => e.programId === programId);
  const statusOf = async (programId: number) => Object.fromEntries((await repo().listPartnerEmails({ programId, limit: 1000 })).map((e) => [e.id, [e.status, e.skipReason]]));

  it("records an email once per dedupe key, keeps every part, finds it by its unsubscribe token", async () => {
    const programId = nextProgram();
    const e = partnerEmail({ programId });
    expect(await repo().recordPartnerEmail(e, at())).toBe(true);
    expect(await repo().recordPartnerEmail({ ...e, eventId: nextEvent(), subject: "again" }, at(SECOND))).toBe(false);
    // A digest: no event, no producer, no withdrawal; an email that cannot be unsubscribed has no token (several may).
    const digest = partnerEmail({ programId, dedupeKey: `commission_digest.${programId}.7.2030-01-02`, producer: null, eventId: null, kind: "commission_digest", category: "commissions" });
    expect(await repo().recordPartnerEmail(digest, at())).toBe(true);
    await record({ programId, kind: "payout_failed", category: null, unsubscribeToken: null, withdrawalId: 3 });
    await record({ programId, kind: "payout_failed", category: null, unsubscribeToken: null, withdrawalId: 4, recipient: null, status: "skipped", skipReason: "no address" });

    const found = await repo().findPartnerEmailByUnsubscribeToken(e.unsubscribeToken!);
    expect(found).toEqual({ ...e, id: expect.any(Number), attempts: 0, nextAttemptAt: at(), lastError: null, sentAt: null, createdAt: at() });
    expect(await repo().findPartnerEmailByUnsubscribeToken(digest.unsubscribeToken!)).toMatchObject({ ...digest, status: "pending" });
    expect(await repo().findPartnerEmailByUnsubscribeToken("no-such-token")).toBeNull();
    const listed = await repo().listPartnerEmails({ programId, limit: 10 });
    expect(listed.map((x) => x.kind)).toEqual(["payout_failed", "payout_failed", "commission_digest", "commission_reduced"]);
    expect((await repo().listPartnerEmails({ programId, kind: "commission_digest", limit: 10 })).map((x) => x.dedupeKey)).toEqual([digest.dedupeKey]);
  });

  it("pages a program's emails newest first, by partner, status and kind", async () => {
    const programId = nextProgram();
    for (let i = 0; i < 5; i++) await record({ programId }, at(i * SECOND));
    // Two in the same instant: ids break the tie.
    await record({ programId, partnerId: 8, kind: "payout_failed", category: null }, at(4 * SECOND));
    await record({ programId: nextProgram() }, at(2 * SECOND));
    const all = (await repo().listProgramPartnerEmails({ programId, limit: 100 })).data;
    expect(all).toHaveLength(6);
    expect(all.map((e) => e.createdAt.getTime())).toEqual([...all.map((e) => e.createdAt.getTime())].sort((a, b) => b - a));
    const pages: number[][] = [];
    let cursor: string | null | undefined;
    do {
      const page = await repo().listProgramPartnerEmails({ programId, limit: 4, cursor: cursor ? decodeCursor(cursor)! : undefined });
      pages.push(page.data.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages.map((p) => p.length)).toEqual([4, 2]);
    expect(pages.flat()).toEqual(all.map((e) => e.id));
    expect((await repo().listProgramPartnerEmails({ programId, limit: 6 })).nextCursor).toBeNull();
    const ids = async (f: object) => (await repo().listProgramPartnerEmails({ programId, limit: 100, ...f })).data.map((e) => e.id);
    const other = all.find((e) => e.partnerId === 8)!;
    expect(await ids({ partnerId: 8 })).toEqual([other.id]);
    expect(await ids({ kind: "payout_failed" })).toEqual([other.id]);
    expect(await ids({ status: "sent" })).toEqual([]);
    expect((await repo().listProgramPartnerEmails({ programId, limit: 10, from: at(SECOND), to: at(3 * SECOND) })).data.map((e) => e.createdAt)).toEqual([at(2 * SECOND), at(SECOND)]);
  });

  it("retries a failed email from zero attempts; a pending or sent one is left alone; another program's is not found", async () => {
    const programId = nextProgram();
    const email = await record({ programId });
    const [claimed] = await claimOf(programId, "w1", at(SECOND));
    await repo().recordPartnerEmailAttempt(claimed.id, "w1", "550 mailbox unavailable", { status: "failed" }, at(SECOND));
    const failed = (await repo().listPartnerEmails({ programId, limit: 1 }))[0];
    expect(failed).toMatchObject({ id: email.id, status: "failed", attempts: 1, lastError: "550 mailbox unavailable" });

    expect(await repo().retryPartnerEmail(programId, email.id, at(10 * SECOND))).toEqual({
      retried: true,
      email: { ...failed, status: "pending", attempts: 0, nextAttemptAt: at(10 * SECOND) },
    });
    expect(await repo().retryPartnerEmail(programId, email.id, at(11 * SECOND))).toMatchObject({ retried: false, email: { status: "pending", nextAttemptAt: at(10 * SECOND) } });
    expect(await repo().retryPartnerEmail(nextProgram(), email.id, at())).toBeNull();
    expect(await repo().retryPartnerEmail(programId, 2_000_000_000, at())).toBeNull();
    // w1's claim ended with the failure: a late record from it does not move the retried email; a new claim can.
    await repo().recordPartnerEmailAttempt(email.id, "w1", null, { status: "sent" }, at(10 * SECOND));
    expect(await claimOf(programId, "w2", at(9 * SECOND))).toEqual([]);
    const [again] = await claimOf(programId, "w2", at(10 * SECOND));
    expect([again.id, again.attempts]).toEqual([email.id, 1]);
    await repo().recordPartnerEmailAttempt(email.id, "w2", null, { status: "sent" }, at(12 * SECOND));
    expect(await repo().retryPartnerEmail(programId, email.id, at(13 * SECOND))).toMatchObject({ retried: false, email: { status: "sent", sentAt: at(12 * SECOND) } });
  });

  it("unsubscribes an address from one category of one program: its pending emails are skipped at once, except one being sent", async () => {
    const programId = nextProgram();
    const sent = await record({ programId });
    expect((await claimOf(programId, "w0", at(SECOND))).map((e) => e.id)).toEqual([sent.id]);
    await repo().recordPartnerEmailAttempt(sent.id, "w0", null, { status: "sent" }, at(SECOND));
    const beingSent = await record({ programId, recipient: "Pat@Example.com" });
    expect((await claimOf(programId, "w1", at(SECOND))).map((e) => e.id)).toEqual([beingSent.id]);
    // Stored in mixed case: addresses compare case-insensitively.
    const pending = await record({ programId, recipient: "Pat@Example.com" });
    const otherCategory = await record({ programId, kind: "payout_paid", category: "payouts" });
    const otherAddress = await record({ programId, recipient: "sam@example.com" });
    const otherProgram = await record({ programId: nextProgram() });

    const u = { programId, recipient: "PAT@example.COM", category: "refunds" } as const;
    expect(await repo().isUnsubscribed(u)).toBe(false);
    await repo().unsubscribe(u, at(3 * SECOND));
    // Once, also concurrently.
    await Promise.all([repo().unsubscribe(u, at(4 * SECOND)), repo().unsubscribe({ ...u, recipient: "pat@example.com" }, at(4 * SECOND))]);
    expect(await repo().isUnsubscribed({ ...u, recipient: "pat@EXAMPLE.com" })).toBe(true);
    expect(await repo().isUnsubscribed({ ...u, category: "payouts" })).toBe(false);
    expect(await repo().isUnsubscribed({ ...u, programId: otherProgram.programId })).toBe(false);
    expect(await statusOf(programId)).toEqual({
      [beingSent.id]: ["pending", null],
      [pending.id]: ["skipped", UNSUBSCRIBED_REASON],
      [sent.id]: ["sent", null],
      [otherCategory.id]: ["pending", null],
      [otherAddress.id]: ["pending", null],
    });
    expect((await statusOf(otherProgram.programId))[otherProgram.id]).toEqual(["pending", null]);
    // The worker checks before sending and skips the one it holds.
    await repo().recordPartnerEmailAttempt(beingSent.id, "w1", null, { status: "skipped", reason: UNSUBSCRIBED_REASON }, at(5 * SECOND));
    expect((await statusOf(programId))[beingSent.id]).toEqual(["skipped", UNSUBSCRIBED_REASON]);

    await repo().resubscribe({ ...u, recipient: "pat@example.com" });
    expect(await repo().isUnsubscribed(u)).toBe(false);
    // Skipped emails stay skipped; a new one is not.
    expect((await statusOf(programId))[pending.id]).toEqual(["skipped", UNSUBSCRIBED_REASON]);
    await repo().resubscribe(u);
  });

  it("keeps a program's email settings: the defaults until set, then each put replaces them", async () => {
    const programId = nextProgram();
    expect(await repo().getPartnerEmailSettings(programId)).toEqual({ programId, replyTo: null, commissionEmails: "daily", monthlySummary: true, updatedAt: null });
    const put = { programId, replyTo: "partners@acme.example", commissionEmails: "weekly", monthlySummary: false } as const;
    expect(await repo().putPartnerEmailSettings(put, at())).toEqual({ ...put, updatedAt: at() });
    expect(await repo().getPartnerEmailSettings(programId)).toEqual({ ...put, updatedAt: at() });
    const again = { ...put, replyTo: null, commissionEmails: "each", monthlySummary: true } as const;
    await repo().putPartnerEmailSettings(again, at(SECOND));
    expect(await repo().getPartnerEmailSettings(programId)).toEqual({ ...again, updatedAt: at(SECOND) });
    expect((await repo().getPartnerEmailSettings(nextProgram())).updatedAt).toBeNull();
  });

  describe("partner activity", () => {
    const activity = (over: Partial<NewPartnerActivity> = {}): NewPartnerActivity => ({
      producer: "commissions",
      eventId: nextEvent(),
      programId: 1,
      partnerId: 7,
      kind: "earned",
      commissionId: 11,
      transactionId: "txn_1",
      amountCents: 2000,
      currency: "usd",
      month: "2030-01",
      digestDueAt: at(DAY),
      ...over,
    });
    const recordActivity = async (over: Partial<NewPartnerActivity> = {}, now = at()) => {
      const a = activity(over);
      expect(await repo().recordPartnerActivity(a, now)).toBe(true);
      return a;
    };
    const digestOf = (programId: number, partnerId: number, key: string) => (items: PartnerActivity[]) =>
      partnerEmail({ programId, partnerId, dedupeKey: key, producer: null, eventId: null, kind: "commission_digest", category: "commissions", text: items.map((i) => i.eventId).join(",") });
    const keysOf = async (cutoff: Date, programIds: number[], limit = 100) => (await repo().dueDigests(cutoff, limit)).filter((k) => programIds.includes(k.programId));

    it("records activity once per (producer, event, kind)", async () => {
      const programId = nextProgram();
      const a = await recordActivity({ programId }, at(5 * SECOND));
      expect(await repo().recordPartnerActivity({ ...a, amountCents: 1 }, at())).toBe(false);
      // The same event's deduction, and another producer's event with the same id, are other activity.
      await recordActivity({ ...a, kind: "reduced", amountCents: -600, digestDueAt: null });
      await recordActivity({ ...a, producer: "sales" });
      const [first, ...rest] = await repo().activityOf({ programId, partnerId: 7 }, "2030-01");
      expect(first).toEqual({ ...a, id: expect.any(Number), digestEmailId: null, createdAt: at(5 * SECOND) });
      expect(rest.map((x) => [x.producer, x.kind, x.amountCents])).toEqual([
        ["commissions", "reduced", -600],
        ["sales", "earned", 2000],
      ]);
    });

    it("collects a pair's earned activity due by the cutoff into one digest email, once", async () => {
      const programId = nextProgram();
      const a1 = await recordActivity({ programId });
      const a2 = await recordActivity({ programId });
      const later = await recordActivity({ programId, digestDueAt: at(2 * DAY) });
      await recordActivity({ programId, digestDueAt: null });
      await recordActivity({ programId, kind: "reduced", digestDueAt: null, amountCents: -100 });
      await recordActivity({ programId, partnerId: 8 });

      expect(await keysOf(at(DAY - 1), [programId])).toEqual([]);
      expect(await keysOf(at(DAY), [programId])).toEqual([
        { programId, partnerId: 7 },
        { programId, partnerId: 8 },
      ]);
      const seen: number[][] = [];
      const render = digestOf(programId, 7, `commission_digest.${programId}.7.1`);
      const renderSeeing = (items: PartnerActivity[]) => {
        seen.push(items.map((i) => i.eventId));
        return render(items);
      };
      expect(await repo().collectDigest({ programId, partnerId: 7 }, at(DAY), renderSeeing, at(DAY))).toBe(true);
      expect(seen).toEqual([[a1.eventId, a2.eventId]]);
      const [email] = await repo().listPartnerEmails({ programId, partnerId: 7, limit: 10 });
      expect(email).toMatchObject({ dedupeKey: `commission_digest.${programId}.7.1`, text: `${a1.eventId},${a2.eventId}`, status: "pending", createdAt: at(DAY) });
      const digested = (await repo().activityOf({ programId, partnerId: 7 }, "2030-01")).map((a) => [a.eventId, a.digestEmailId]);
      expect(digested.filter(([, id]) => id !== null)).toEqual([
        [a1.eventId, email.id],
        [a2.eventId, email.id],
      ]);

      // Nothing left by that cutoff: no email, render not called.
      expect(
        await repo().collectDigest(
          { programId, partnerId: 7 },
          at(DAY),
          () => {
            throw new Error("nothing to render");
          },
          at(DAY),
        ),
      ).toBe(false);
      expect(await keysOf(at(DAY), [programId])).toEqual([{ programId, partnerId: 8 }]);
      // Sorted by (program, partner): a limit keeps the first.
      expect(await repo().dueDigests(at(2 * DAY), 1)).toEqual((await repo().dueDigests(at(2 * DAY), 1000)).slice(0, 1));
      // A digest whose key is recorded already records nothing and leaves the activity to collect.
      expect(await repo().collectDigest({ programId, partnerId: 7 }, at(2 * DAY), render, at(2 * DAY))).toBe(false);
      expect((await repo().activityOf({ programId, partnerId: 7 }, "2030-01")).find((a) => a.eventId === later.eventId)!.digestEmailId).toBeNull();

      // Concurrent collectors of one pair: one digest.
      const results = await Promise.all(
        ["a", "b", "c"].map((n) => repo().collectDigest({ programId, partnerId: 8 }, at(DAY), digestOf(programId, 8, `commission_digest.${programId}.8.${n}`), at(DAY))),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await repo().listPartnerEmails({ programId, partnerId: 8, limit: 10 })).toHaveLength(1);
      expect(await keysOf(at(2 * DAY), [programId])).toEqual([{ programId, partnerId: 7 }]);
    });

    it("lists the pairs due a monthly summary: activity that month, summaries on, none recorded yet; activityOf gives the month's, oldest first", async () => {
      const month = "2031-05";
      const [p1, off] = [nextProgram(), nextProgram()];
      const first = await recordActivity({ programId: p1, partnerId: 1, month, digestDueAt: null }, at(2 * SECOND));
      const second = await recordActivity({ programId: p1, partnerId: 1, month, kind: "paid_out", commissionId: null, transactionId: null, digestDueAt: null }, at(3 * SECOND));
      await recordActivity({ programId: p1, partnerId: 1, month: "2031-04", digestDueAt: null });
      await recordActivity({ programId: p1, partnerId: 2, month, digestDueAt: null });
      await recordActivity({ programId: off, partnerId: 1, month, digestDueAt: null });
      await repo().putPartnerEmailSettings({ programId: off, replyTo: null, commissionEmails: "daily", monthlySummary: false }, at());

      expect(await repo().dueSummaries(month, 100)).toEqual([
        { programId: p1, partnerId: 1 },
        { programId: p1, partnerId: 2 },
      ]);
      expect(await repo().dueSummaries(month, 1)).toEqual([{ programId: p1, partnerId: 1 }]);
      await record({ programId: p1, partnerId: 1, dedupeKey: `monthly_summary.${p1}.1.${month}`, kind: "monthly_summary", category: "summaries", producer: null, eventId: null });
      // Another month's summary of the pair does not count.
      await record({ programId: p1, partnerId: 2, dedupeKey: `monthly_summary.${p1}.2.2031-04`, kind: "monthly_summary", category: "summaries", producer: null, eventId: null });
      expect(await repo().dueSummaries(month, 100)).toEqual([{ programId: p1, partnerId: 2 }]);

      expect((await repo().activityOf({ programId: p1, partnerId: 1 }, month)).map((a) => [a.eventId, a.kind, a.createdAt])).toEqual([
        [first.eventId, "earned", at(2 * SECOND)],
        [second.eventId, "paid_out", at(3 * SECOND)],
      ]);
      expect(await repo().activityOf({ programId: p1, partnerId: 3 }, month)).toEqual([]);
    });
  });
});
