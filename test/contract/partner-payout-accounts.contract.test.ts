/**
 * The processor's storage for paying partners through Stripe Connect (docs/payouts.md): partners' Express accounts
 * (one per partner and program, an account id of one partner only, an older report of the state never over a newer
 * one), the transfers made for payouts, and the Connect endpoint's signing secret beside the account endpoint's.
 */
import { createProcessorRepository } from "../../services/processor/storage";
import type { PartnerPayoutAccount, ProcessorRepository } from "../../services/processor/repository";
import { at, backends, counter, SECOND, useRepository } from "./harness";

const unique = counter(100);

describe.each(backends)("processor partner payout storage on %s", (_name, backend) => {
  const repo = useRepository<ProcessorRepository>(backend, createProcessorRepository);
  const account = (over: Partial<PartnerPayoutAccount> = {}): PartnerPayoutAccount => ({
    programId: unique(),
    partnerId: unique(),
    accountId: `acct_${unique()}`,
    ready: false,
    detailsSubmitted: false,
    updatedAt: at(0),
    ...over,
  });

  it("keeps a partner's first account: a second one for the same partner and program is not stored, the first is answered", async () => {
    const first = account();
    expect(await repo().addPartnerPayoutAccount(first)).toEqual(first);
    const second = { ...first, accountId: `acct_${unique()}`, ready: true, updatedAt: at(SECOND) };
    expect(await repo().addPartnerPayoutAccount(second)).toEqual(first);
    expect(await repo().getPartnerPayoutAccount(first.programId, first.partnerId)).toEqual(first);
    expect(await repo().findPartnerPayoutAccount(first.programId, second.accountId)).toBeNull();
  });

  it("two first accounts of a partner at once: one is kept, both callers get it", async () => {
    const base = account();
    const tries = Array.from({ length: 6 }, () => ({ ...base, accountId: `acct_${unique()}` }));
    const answers = await Promise.all(tries.map((a) => repo().addPartnerPayoutAccount(a)));
    expect(new Set(answers.map((a) => a.accountId)).size).toBe(1);
    expect(await repo().getPartnerPayoutAccount(base.programId, base.partnerId)).toEqual(answers[0]);
  });

  it("an account id belongs to one partner of a program; another program may know the same id", async () => {
    const first = account();
    await repo().addPartnerPayoutAccount(first);
    await expect(repo().addPartnerPayoutAccount({ ...first, partnerId: unique() })).rejects.toThrow();
    const elsewhere = { ...first, programId: unique() };
    expect(await repo().addPartnerPayoutAccount(elsewhere)).toEqual(elsewhere);
    expect(await repo().findPartnerPayoutAccount(first.programId, first.accountId)).toEqual(first);
    expect(await repo().findPartnerPayoutAccount(elsewhere.programId, first.accountId)).toEqual(elsewhere);
  });

  it("lists the accounts of the partners asked for, in the program only, by partner id", async () => {
    const programId = unique();
    const [a, b, c] = [account({ programId }), account({ programId }), account({ programId })];
    for (const x of [c, a, b]) await repo().addPartnerPayoutAccount(x);
    await repo().addPartnerPayoutAccount(account());
    const withoutAccount = unique();
    expect(await repo().listPartnerPayoutAccounts(programId, [c.partnerId, a.partnerId, withoutAccount])).toEqual([a, c]);
    expect(await repo().listPartnerPayoutAccounts(programId, [])).toEqual([]);
    expect(await repo().listPartnerPayoutAccounts(unique(), [a.partnerId])).toEqual([]);
  });

  it("a newer report of the state replaces the stored one; an older one changes nothing; an unknown account is null", async () => {
    const a = account({ updatedAt: at(10 * SECOND) });
    await repo().addPartnerPayoutAccount(a);
    const ready = await repo().updatePartnerPayoutAccountState(a.programId, a.accountId, { ready: true, detailsSubmitted: true }, at(20 * SECOND));
    expect(ready).toEqual({ ...a, ready: true, detailsSubmitted: true, updatedAt: at(20 * SECOND) });
    // A late redelivery of an earlier event: the stored (newer) state stays and is answered.
    expect(await repo().updatePartnerPayoutAccountState(a.programId, a.accountId, { ready: false, detailsSubmitted: false }, at(15 * SECOND))).toEqual(ready);
    // Restricted later: applied.
    const restricted = await repo().updatePartnerPayoutAccountState(a.programId, a.accountId, { ready: false, detailsSubmitted: true }, at(30 * SECOND));
    expect(restricted).toMatchObject({ ready: false, detailsSubmitted: true, updatedAt: at(30 * SECOND) });
    expect(await repo().getPartnerPayoutAccount(a.programId, a.partnerId)).toEqual(restricted);
    expect(await repo().updatePartnerPayoutAccountState(a.programId, `acct_${unique()}`, { ready: true, detailsSubmitted: true }, at(40 * SECOND))).toBeNull();
    expect(await repo().updatePartnerPayoutAccountState(unique(), a.accountId, { ready: true, detailsSubmitted: true }, at(40 * SECOND))).toBeNull();
  });

  it("a payout's transfer: the first record stays; found by transfer id within its program only", async () => {
    const programId = unique();
    const transfer = { programId, payoutId: unique(), partnerId: unique(), transferId: `tr_${unique()}`, amountCents: 1234, currency: "usd", createdAt: at(0) };
    await repo().recordPayoutTransfer(transfer);
    await repo().recordPayoutTransfer({ ...transfer, transferId: `tr_${unique()}`, amountCents: 1 });
    await repo().recordPayoutTransfer(transfer);
    expect(await repo().findPayoutTransfer(programId, transfer.transferId)).toEqual(transfer);
    expect(await repo().findPayoutTransfer(unique(), transfer.transferId)).toBeNull();
    expect(await repo().findPayoutTransfer(programId, `tr_${unique()}`)).toBeNull();
  });

  it("the Connect endpoint's signing secret is kept apart from the account endpoint's", async () => {
    const programId = unique();
    await repo().setWebhookSecret(programId, "whsec_accountEndpoint", at(0));
    expect(await repo().getWebhookSecret(programId, "connect")).toBeNull();
    await repo().setWebhookSecret(programId, "whsec_connectEndpoint", at(SECOND), "connect");
    expect(await repo().getWebhookSecret(programId)).toEqual({ programId, signingSecret: "whsec_accountEndpoint", setAt: at(0) });
    expect(await repo().getWebhookSecret(programId, "connect")).toEqual({ programId, signingSecret: "whsec_connectEndpoint", setAt: at(SECOND) });
    await repo().setWebhookSecret(programId, null, at(2 * SECOND), "connect");
    expect(await repo().getWebhookSecret(programId, "connect")).toBeNull();
    expect(await repo().getWebhookSecret(programId, "account")).toMatchObject({ signingSecret: "whsec_accountEndpoint" });
  });
});
