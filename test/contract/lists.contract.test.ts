/**
 * The list methods of the sales, programs, attribution and notifications repositories (shared/pagination.ts):
 * on every backend, pages are newest first by (createdAt, id), walking them gives every row once, and each
 * filter keeps exactly its rows. (The commissions and withdrawals lists are in commissions.contract.test.ts.)
 */
import { createAttributionRepository } from "../../services/attribution/storage";
import type { AttributionRepository, NewLead } from "../../services/attribution/repository";
import { createNotificationsRepository } from "../../services/notifications/storage";
import type { NewNotification, NotificationsRepository } from "../../services/notifications/repository";
import { createProgramsRepository } from "../../services/programs/storage";
import type { NewProgram, ProgramsRepository } from "../../services/programs/repository";
import { createSalesRepository } from "../../services/sales/storage";
import type { NewSale, Sale, SalesRepository } from "../../services/sales/repository";
import { decodeCursor, type CursorPosition, type Page } from "../../shared/pagination";
import { at, backends, counter, newSale, useRepository } from "./harness";

const unique = counter();

/** Every page of a list, `limit` rows each; checks each page's size and that no row comes twice. */
async function walk<T extends { id: number; createdAt: Date }>(read: (cursor: CursorPosition | undefined) => Promise<Page<T>>, limit: number): Promise<T[]> {
  const all: T[] = [];
  let cursor: CursorPosition | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await read(cursor);
    expect(page.data.length).toBeLessThanOrEqual(limit);
    all.push(...page.data);
    if (!page.nextCursor) break;
    expect(page.data).toHaveLength(limit);
    cursor = decodeCursor(page.nextCursor)!;
  }
  const ids = all.map((r) => r.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids).toEqual([...all].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id).map((r) => r.id));
  return all;
}

/** Walks with several page sizes: each gives the rows of one big page. */
async function walkAll<T extends { id: number; createdAt: Date }>(read: (limit: number, cursor: CursorPosition | undefined) => Promise<Page<T>>): Promise<T[]> {
  const whole = await walk((c) => read(100, c), 100);
  for (const limit of [1, 3]) expect((await walk((c) => read(limit, c), limit)).map((r) => r.id)).toEqual(whole.map((r) => r.id));
  return whole;
}

describe.each(backends)("list methods on %s", (_name, backend) => {
  describe("sales.listSalesPage", () => {
    const repo = useRepository<SalesRepository>(backend, createSalesRepository);
    const sale = (programId: number, over: Partial<NewSale>): NewSale => newSale(programId, { amountCents: 1000, ...over });

    it("pages newest first and filters by partner, test and attribution", async () => {
      const kinds: Array<Partial<NewSale>> = [{ partnerId: 1 }, { partnerId: 2 }, {}, { partnerId: 1, isTest: true }, { partnerId: 1 }, {}, { partnerId: 2, isTest: true }];
      const made: Sale[] = [];
      for (const k of kinds) made.push((await repo().insertSale(sale(300, k)))!);
      await repo().insertSale(sale(301, { partnerId: 1 }));
      const ids = (f: (s: NewSale) => boolean) =>
        made
          .filter(f)
          .map((s) => s.id)
          .reverse();
      expect((await walkAll((limit, cursor) => repo().listSalesPage({ programId: 300, limit, cursor }))).map((s) => s.id)).toEqual(ids(() => true));
      const list = async (f: object) => (await walk((cursor) => repo().listSalesPage({ programId: 300, limit: 2, cursor, ...f }), 2)).map((s) => s.id);
      expect(await list({ partnerId: 1 })).toEqual(ids((s) => s.partnerId === 1));
      expect(await list({ test: true })).toEqual(ids((s) => s.isTest));
      expect(await list({ test: false, attributed: true })).toEqual(ids((s) => !s.isTest && s.partnerId !== null));
      expect(await list({ attributed: false })).toEqual(ids((s) => s.partnerId === null));
      expect(await list({ partnerId: 1, attributed: false })).toEqual([]);
      const all = await repo().listSalesPage({ programId: 300, limit: 100 });
      const middle = all.data[3].createdAt;
      expect((await list({ from: middle })).length + (await list({ to: middle })).length).toBe(made.length);
    });
  });

  describe("programs.listProgramsPage", () => {
    const repo = useRepository<ProgramsRepository>(backend, createProgramsRepository);
    const program = (workspaceId: number | null): NewProgram => ({
      workspaceId,
      name: `Program ${unique()}`,
      currency: "usd",
      commissionRule: { type: "percentage", basisPoints: 1000 },
      holdDays: 0,
      recurringCommissionMonths: null,
      testMode: false,
      selfReferralGuard: true,
      paymentTrackingMode: "s2s",
      allowedOrigins: [],
    });

    it("pages every program, or one workspace's", async () => {
      const made = [];
      for (const w of [5, 6, 5, null, 5]) made.push(await repo().createProgram(program(w)));
      expect((await walkAll((limit, cursor) => repo().listProgramsPage({ limit, cursor }))).map((p) => p.id)).toEqual(made.map((p) => p.id).reverse());
      const fives = await walk((cursor) => repo().listProgramsPage({ workspaceId: 5, limit: 2, cursor }), 2);
      expect(fives.map((p) => p.id)).toEqual([made[4].id, made[2].id, made[0].id]);
      expect(fives[0]).toEqual(made[4]);
    });
  });

  describe("attribution.listLeadsPage", () => {
    const repo = useRepository<AttributionRepository>(backend, createAttributionRepository);
    const lead = (programId: number, over: Partial<NewLead>): NewLead => ({
      programId,
      customerKey: `cust_${unique()}`,
      email: `c${unique()}@example.com`,
      clickId: null,
      partnerId: null,
      isTest: false,
      timestamp: at(0),
      ...over,
    });

    it("pages a program's leads with their key and email, by partner and test", async () => {
      const made = [];
      for (const k of [{ partnerId: 1 }, {}, { partnerId: 2, isTest: true }, { partnerId: 1 }]) made.push((await repo().recordLead(lead(400, k))).lead);
      await repo().recordLead(lead(401, { partnerId: 1 }));
      const all = await walkAll((limit, cursor) => repo().listLeadsPage({ programId: 400, limit, cursor }));
      expect(all).toEqual([...made].reverse());
      expect((await walk((cursor) => repo().listLeadsPage({ programId: 400, partnerId: 1, limit: 1, cursor }), 1)).map((l) => l.id)).toEqual([made[3].id, made[0].id]);
      expect((await repo().listLeadsPage({ programId: 400, test: true, limit: 5 })).data.map((l) => l.id)).toEqual([made[2].id]);
    });
  });

  describe("notifications.listWorkspacePage", () => {
    const repo = useRepository<NotificationsRepository>(backend, createNotificationsRepository);
    const notification = (over: Partial<NewNotification>): NewNotification => ({
      eventId: unique(),
      kind: "partner_notice",
      workspaceId: 9,
      programId: 1,
      partnerId: 1,
      commissionId: unique(),
      transactionId: `txn_${unique()}`,
      status: "refunded",
      deductionCents: 100,
      currency: "usd",
      reason: "refund",
      partnerPaid: false,
      ...over,
    });

    it("pages a workspace's inbox, by kind, read state, program and partner", async () => {
      const kinds: Array<Partial<NewNotification>> = [
        {},
        { kind: "advertiser_warning", partnerPaid: true },
        { partnerId: 2 },
        { programId: 2 },
        { programId: 2, partnerId: 2 },
        { workspaceId: 10 },
      ];
      for (const k of kinds) expect(await repo().insertOnce(notification(k))).toBe(true);
      const all = await walkAll((limit, cursor) => repo().listWorkspacePage({ workspaceId: 9, limit, cursor }));
      expect(all).toHaveLength(5);
      const list = async (f: object) => walk((cursor) => repo().listWorkspacePage({ workspaceId: 9, limit: 2, cursor, ...f }), 2);
      expect((await list({ partnerId: 2 })).every((n) => n.partnerId === 2)).toBe(true);
      expect(await list({ partnerId: 2 })).toHaveLength(2);
      expect(await list({ programId: 2 })).toHaveLength(2);
      expect(await list({ programId: 2, partnerId: 2 })).toHaveLength(1);
      expect((await list({ kind: "advertiser_warning" })).map((n) => n.kind)).toEqual(["advertiser_warning"]);
      await repo().markRead(9, all[0].id, at(0));
      expect((await list({ unread: false })).map((n) => n.id)).toEqual([all[0].id]);
      expect((await list({ unread: true })).map((n) => n.id)).toEqual(all.slice(1).map((n) => n.id));
    });
  });
});
