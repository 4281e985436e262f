import {
  createNotificationsRepository,
  type NewNotification,
  type Notification,
  type NotificationsRepository,
} from "../../services/notifications/repository";
import { backends, counter, useRepository } from "./harness";

const nextEvent = counter(1);
const nextProgram = counter(100);

const notification = (over: Partial<NewNotification> = {}): NewNotification => ({
  eventId: nextEvent(),
  kind: "partner_notice",
  programId: 1,
  partnerId: 7,
  commissionId: 11,
  transactionId: "txn_1",
  status: "refunded",
  deductionCents: 600,
  currency: "usd",
  reason: "customer refund",
  ...over,
});

const eventIds = (list: Notification[]) => list.map((n) => n.eventId).sort((a, b) => a - b);

describe.each(backends)("notifications repository contract on %s", (_name, backend) => {
  const repo = useRepository<NotificationsRepository>(backend, createNotificationsRepository);

  it("stores a notification once per event and kind", async () => {
    const programId = nextProgram();
    const input = notification({ programId });

    expect(await repo().insertOnce(input)).toBe(true);
    expect(await repo().insertOnce({ ...input, deductionCents: 999, reason: "changed" })).toBe(false);
    expect(await repo().insertOnce({ ...input, kind: "advertiser_warning" })).toBe(true);
    expect(await repo().insertOnce({ ...input, kind: "advertiser_warning" })).toBe(false);

    const stored = await repo().list({ programId, limit: 10 });
    expect(stored).toHaveLength(2);
    const notice = stored.find((n) => n.kind === "partner_notice")!;
    expect(Number.isInteger(notice.id)).toBe(true);
    expect(notice).toEqual({ ...input, id: notice.id, createdAt: expect.any(Date), readAt: null });
  });

  it("round-trips a notification without a reason", async () => {
    const programId = nextProgram();
    const input = notification({ programId, reason: null, status: "reversed", deductionCents: 0, currency: "jpy" });
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
});
