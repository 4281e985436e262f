/**
 * Shared plumbing of the storage contract suites: every suite runs once per
 * reachable backend, each `describe` block on a fresh, empty database opened
 * the way the services open theirs (acquireDatabase + createXRepository).
 */
import { acquireDatabase, releaseDatabase, type Database } from "../../shared/storage/database";
import { reachableBackends, type TestBackend } from "../support/databases";
import type { NewSale } from "../../services/sales/repository";
import type { NewCommission } from "../../services/commissions/repository";

/** `describe.each` rows: [backend name, backend]. */
export const backends: Array<[TestBackend["name"], TestBackend]> = reachableBackends().map((b) => [b.name, b]);

/**
 * Opens a fresh database of `backend` for the enclosing describe block and
 * builds the repository on it; the returned getter gives the repository to
 * the tests. Closes and drops the database after the block.
 */
export function useRepository<R>(backend: TestBackend, create: (db: Database) => Promise<R>): () => R {
  let repo: R | undefined;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let acquired = false;

  beforeAll(async () => {
    database = await backend.create();
    const db = await acquireDatabase(database.url);
    acquired = true;
    repo = await create(db);
  });

  afterAll(async () => {
    if (!database) return;
    if (acquired) await releaseDatabase(database.url);
    await database.drop();
  });

  return () => {
    if (repo === undefined) throw new Error(`The ${backend.name} repository is not open (did beforeAll fail?).`);
    return repo;
  };
}

/** Distinct small integers for ids the tests make up (program, partner, sale ids...). */
export function counter(start = 1): () => number {
  let next = start;
  return () => next++;
}

/** A fixed instant plus an offset, so no test depends on the wall clock. */
export const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
export const at = (offsetMs = 0): Date => new Date(T0 + offsetMs);
export const SECOND = 1000;
export const DAY = 86_400_000;

const saleIds = counter();

/** A new sale of `programId` for a repository test: 100.00 usd, live, unattributed, without commission, at T0; `over` sets the rest. */
export const newSale = (programId: number, over: Partial<NewSale> = {}): NewSale => ({
  programId,
  transactionId: `txn_h${saleIds()}`,
  amountCents: 10_000,
  currency: "usd",
  conversion: null,
  lines: null,
  discountIds: null,
  customerKey: null,
  email: null,
  processorCustomerId: null,
  partnerId: null,
  clickId: null,
  attributionMethod: null,
  isTest: false,
  isRecurring: false,
  saleType: null,
  subscriptionId: null,
  commissionState: "none",
  noCommissionReason: null,
  occurredAt: at(0),
  ...over,
});

/** A new commission of `amountCents` on sale `saleId` for a repository test: 20 % of a sale five times as much, usd, approvable at `createdAt`; `over` sets the rest. */
export const newSaleCommission = (programId: number, partnerId: number, saleId: number, amountCents: number, createdAt: Date, over: Partial<NewCommission> = {}): NewCommission => ({
  programId,
  partnerId,
  kind: "sale",
  saleId,
  leadKey: null,
  transactionId: `txn_${saleId}`,
  currency: "usd",
  saleAmountCents: amountCents * 5,
  ruleType: "percentage",
  ruleValue: 2000,
  groupId: null,
  rewardLines: null,
  amountCents,
  approvableAt: createdAt,
  ...over,
});
