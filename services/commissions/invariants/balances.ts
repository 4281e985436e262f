import { groupBy, keyIds, keyOf, type LedgerSnapshot, type Violate } from "./snapshot";

/** balance.arithmetic, balance.ledger and withdrawals.open_within_balance, per partner, program and currency. */
export function checkBalances(snapshot: Pick<LedgerSnapshot, "commissions" | "balances" | "withdrawals">, violate: Violate): void {
  const balances = new Map(snapshot.balances.map((b) => [keyOf(b), b]));
  const creditedNet = new Map<string, number>();
  for (const c of snapshot.commissions) {
    if (c.creditedAt) creditedNet.set(keyOf(c), (creditedNet.get(keyOf(c)) ?? 0) + c.amountCents - c.deductedCents);
  }
  const withdrawalsBy = groupBy(snapshot.withdrawals, keyOf);
  const keys = new Set([...balances.keys(), ...creditedNet.keys(), ...withdrawalsBy.keys()].map(String));
  for (const key of keys) {
    const ws = withdrawalsBy.get(key) ?? [];
    const [partnerId, programId] = key.split("|").map(Number);
    const currency = key.split("|")[2];
    const stored = balances.get(key) ?? { partnerId, programId, currency, balanceCents: 0, creditedCents: 0, deductedCents: 0, paidCents: 0 };
    const ids = keyIds(stored);
    if (stored.balanceCents !== stored.creditedCents - stored.deductedCents - stored.paidCents) {
      violate("balance.arithmetic", ids, `balance ${stored.balanceCents} != credited ${stored.creditedCents} - deducted ${stored.deductedCents} - paid ${stored.paidCents}`);
    }
    const paid = ws.filter((w) => w.status === "paid").reduce((s, w) => s + w.amountCents, 0);
    const net = creditedNet.get(key) ?? 0;
    if (stored.balanceCents !== net - paid || stored.paidCents !== paid) {
      violate("balance.ledger", ids, `balance ${stored.balanceCents} (paid ${stored.paidCents}); the ledger says credited net ${net} - paid withdrawals ${paid} = ${net - paid}`);
    }
    // Processing payouts are on their way and no longer reduced by refunds; open ones fit in what is left.
    const open = ws.filter((w) => w.status === "open");
    const openTotal = open.reduce((s, w) => s + w.amountCents, 0);
    const processingTotal = ws.filter((w) => w.status === "processing").reduce((s, w) => s + w.amountCents, 0);
    if (openTotal > Math.max(stored.balanceCents - processingTotal, 0)) {
      violate(
        "withdrawals.open_within_balance",
        { ...ids, withdrawals: open.map((w) => w.id) },
        `open withdrawals ${openTotal} > max(balance ${stored.balanceCents} - processing ${processingTotal}, 0)`,
      );
    }
  }
}
