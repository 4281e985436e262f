/** The Rewards screen's smaller forms: create a group, move a partner to another group, what a partner would earn. */
import { useEffect, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { count, toMinor } from "../../lib/format";
import { Alert, Field, SelectField } from "../../lib/ui";
import { useConsole } from "../session";
import { defaultGroup, groupOf, groupOption, partnerName, previewWords, type Group, type RewardPreview, type RewardsData } from "./model";

const PLATFORMS: Array<[string, string]> = [
  ["stripe", "Stripe coupon"],
  ["paddle", "Paddle discount"],
];

const CHECK_DELAY_MS = 300;

/** `value` when it is one of `options`, else the first option's value (a select shows the first option then). */
const chosenOf = (value: string, options: Array<[string, string]>): string => (options.some(([v]) => v === value) ? value : (options[0]?.[0] ?? ""));

export function NewGroupForm({ data, currency, onCreated }: { data: RewardsData; currency: string; onCreated: (group: Group) => Promise<void> }) {
  const { programPath } = useConsole();
  const [name, setName] = useState("");
  const [hold, setHold] = useState("");
  const [minPayout, setMinPayout] = useState("0");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const fallback = defaultGroup(data.groups);

  const submit = async (event: Event) => {
    event.preventDefault();
    const holdText = hold.trim();
    const holdDays = Number(holdText);
    const minPayoutCents = toMinor(minPayout || "0", currency);
    let problem = "";
    if (!name.trim()) problem = "Enter the group's name.";
    else if (holdText !== "" && (!Number.isInteger(holdDays) || holdDays < 0 || holdDays > 365)) problem = "Hold days are a whole number from 0 to 365.";
    else if (!Number.isFinite(minPayoutCents) || minPayoutCents < 0) problem = "The minimum payout is an amount of zero or more.";
    if (problem) return setError(problem);
    setBusy(true);
    try {
      const created = await api<Group>("POST", programPath("/groups"), { name: name.trim(), minPayoutCents, ...(holdText === "" ? {} : { holdDays }) });
      setError(null);
      setName("");
      setHold("");
      setMinPayout("0");
      await onCreated(created);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="new-group-title">
      <h2 id="new-group-title">New group</h2>
      <form aria-labelledby="new-group-title" noValidate onSubmit={submit}>
        <div class="fields">
          <Field id="g-name" label="Name" type="text" maxLength={100} autocomplete="off" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <Field
            id="g-hold"
            label="Hold days (optional)"
            hint={`The hourly credit run credits a commission once its hold has passed (0: within the hour).${fallback ? ` Empty: ${count(fallback.holdDays)} days, as the default group.` : ""}`}
            type="number"
            inputMode="numeric"
            min="0"
            max="365"
            step="1"
            value={hold}
            onInput={(e) => setHold(e.currentTarget.value)}
          />
          <Field
            id="g-min"
            label={`Minimum payout (${currency.toUpperCase()})`}
            type="number"
            inputMode="decimal"
            min="0"
            step="any"
            value={minPayout}
            onInput={(e) => setMinPayout(e.currentTarget.value)}
          />
        </div>
        <p>
          <button type="submit" disabled={busy}>
            Create group
          </button>
        </p>
        {error && <Alert>{error}</Alert>}
      </form>
    </section>
  );
}

export function MovePartnerForm({ data, onMoved }: { data: RewardsData; onMoved: (partnerId: number) => Promise<void> }) {
  const { programPath } = useConsole();
  const [partner, setPartner] = useState("");
  const [group, setGroup] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const partners: Array<[string, string]> = data.partners.map((p) => [
    String(p.partnerId),
    `${p.name}${p.status === "approved" ? "" : ` (${p.status})`}, in ${groupOf(data.groups, p.partnerId)?.name ?? "no group"}`,
  ]);
  const groups: Array<[string, string]> = data.groups.map((g) => [String(g.id), groupOption(g)]);
  const partnerId = Number(chosenOf(partner, partners));
  const groupId = Number(chosenOf(group, groups));

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!partnerId || !groupId) return setError("Choose a partner and a group.");
    setBusy(true);
    try {
      await api("PUT", programPath("/group-members"), { assignments: [{ partnerId, groupId }] });
      setError(null);
      await onMoved(partnerId);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="move-title">
      <h2 id="move-title">Move a partner</h2>
      <p class="muted">Only commissions made after the move follow the new group's rewards.</p>
      {partners.length === 0 ? (
        <p class="muted">No partner is enrolled in this program yet.</p>
      ) : (
        <form aria-labelledby="move-title" noValidate onSubmit={submit}>
          <div class="fields">
            <SelectField id="m-partner" label="Partner" value={String(partnerId)} options={partners} onChange={(e) => setPartner(e.currentTarget.value)} />
            <SelectField id="m-group" label="To group" value={String(groupId)} options={groups} onChange={(e) => setGroup(e.currentTarget.value)} />
          </div>
          <p>
            <button type="submit" disabled={busy}>
              Move partner
            </button>
          </p>
          {error && <Alert>{error}</Alert>}
        </form>
      )}
    </section>
  );
}

/**
 * A double-sided reward (docs/rewards.md, "The referred customer's discount"): the discount a group's referred
 * customers get at checkout, a coupon or discount made at the billing platform; saved on the group, or removed.
 */
export function CustomerDiscountForm({ data, onSaved }: { data: RewardsData; onSaved: (group: Group, removed: boolean) => Promise<void> }) {
  const { programPath } = useConsole();
  const groups: Array<[string, string]> = data.groups.map((g) => [String(g.id), groupOption(g)]);
  const [group, setGroup] = useState("");
  const groupId = Number(chosenOf(group, groups));
  const current = data.groups.find((g) => g.id === groupId)?.customerDiscount ?? null;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const send = async (customerDiscount: Record<string, string | null> | null) => {
    setBusy(true);
    try {
      const saved = await api<Group>("PATCH", programPath(`/groups/${groupId}`), { customerDiscount });
      setError(null);
      await onSaved(saved, customerDiscount === null);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const field = (name: string) => String(form.get(name) ?? "").trim();
    if (!field("id") || !field("description")) return setError("Enter the coupon's or discount's id and what the customer gets.");
    void send({ platform: field("platform"), id: field("id"), code: field("code") || null, description: field("description") });
  };

  return (
    <section aria-labelledby="discount-title">
      <h2 id="discount-title">Referred customers' discount</h2>
      <p class="muted">
        A double-sided reward: a visitor who came through a partner's link gets this discount at checkout (the snippet's svc.discount(), or the API for a click id). Make the coupon in Stripe
        or the discount in Paddle first.
      </p>
      {/* Each group's saved discount fills the form anew. */}
      <form key={`${groupId}-${JSON.stringify(current)}`} aria-labelledby="discount-title" noValidate onSubmit={submit}>
        <div class="fields">
          <SelectField id="d-group" label="For the customers of" value={String(groupId)} options={groups} onChange={(e) => setGroup(e.currentTarget.value)} />
          <SelectField id="d-platform" name="platform" label="Platform" value={current?.platform ?? "stripe"} options={PLATFORMS} />
          <Field id="d-id" name="id" label="Coupon or discount id" autocomplete="off" spellcheck={false} defaultValue={current?.id ?? ""} />
          <Field id="d-code" name="code" label="Code the customer types (optional)" autocomplete="off" spellcheck={false} defaultValue={current?.code ?? ""} />
          <Field id="d-description" name="description" label="What the customer gets" maxLength={200} defaultValue={current?.description ?? ""} placeholder="20% off your first month" />
        </div>
        <p class="actions">
          <button type="submit" disabled={busy}>
            Save discount
          </button>
          {current && (
            <button type="button" class="secondary" disabled={busy} onClick={() => void send(null)}>
              Remove discount
            </button>
          )}
        </p>
        {error && <Alert>{error}</Alert>}
      </form>
    </section>
  );
}

/** What a payment would earn a partner now, by their group's rewards and the tier they reached (or the default group's). */
export function EarningsCheck({ data, currency }: { data: RewardsData; currency: string }) {
  const { programPath } = useConsole();
  const [partner, setPartner] = useState("");
  const [amount, setAmount] = useState("49");
  const [product, setProduct] = useState("");
  const [result, setResult] = useState("");
  const code = currency.toUpperCase();

  // Asked again a moment after a field changes, and after the groups change (a partner moved); a late answer is dropped.
  useEffect(() => {
    let current = true;
    const words = async (): Promise<string> => {
      const amountCents = toMinor(amount, currency);
      if (!Number.isFinite(amountCents) || amountCents < 1) return `Enter a payment above zero in ${code}.`;
      const partnerId = Number(partner);
      const productId = product.trim();
      try {
        const answer = await api<RewardPreview>("POST", programPath("/rewards/preview"), {
          amountCents,
          ...(partnerId ? { partnerId } : {}),
          ...(productId ? { productId } : {}),
        });
        const groupName = data.groups.find((g) => g.id === answer.groupId)?.name ?? "their group";
        const who = partnerId ? `${partnerName(data.partners, partnerId)} (${groupName})` : `No partner, by the rewards of ${groupName}`;
        return `${who}: ${previewWords(answer, amountCents, productId, currency)}`;
      } catch (e) {
        return `No preview: ${errorMessage(e)}`;
      }
    };
    const timer = setTimeout(() => void words().then((text) => current && setResult(text)), CHECK_DELAY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [partner, amount, product, data, currency]);

  return (
    <section aria-labelledby="check-title">
      <h2 id="check-title">What a partner would earn</h2>
      <form aria-labelledby="check-title" noValidate onSubmit={(e) => e.preventDefault()}>
        <div class="fields">
          <SelectField
            id="c-partner"
            label="Partner"
            value={partner}
            options={[["", "None: the default group's rewards"], ...data.partners.map((p): [string, string] => [String(p.partnerId), p.name])]}
            onChange={(e) => setPartner(e.currentTarget.value)}
          />
          <Field id="c-amount" label={`Payment (${code})`} type="number" inputMode="decimal" min="0" step="any" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
          <Field id="c-product" label="Product (optional)" type="text" autocomplete="off" spellcheck={false} value={product} onInput={(e) => setProduct(e.currentTarget.value)} />
        </div>
        <p id="check-result" class="preview" role="status" aria-live="polite" aria-atomic="true">
          {result}
        </p>
      </form>
    </section>
  );
}
