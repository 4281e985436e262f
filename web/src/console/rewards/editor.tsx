/**
 * The reward editor: create a reward in a group, or edit one (a new version), with a live preview in words of what an
 * example payment would earn by the draft (POST /rewards/preview with `draft`). The draft lives in the screen, which
 * empties it or fills it from a reward; the editor is mounted anew for each (its error and preview start empty).
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { money, toMinor } from "../../lib/format";
import { Alert, Field, SelectField } from "../../lib/ui";
import { useConsole } from "../session";
import { defaultGroup, fromMinor, groupOption, idList, previewWords, tierWords, type Group, type RecurringRule, type Reward, type RewardPreview, type TierRule } from "./model";

/** How long the preview waits after the last keystroke before asking the API. */
const PREVIEW_DELAY_MS = 300;

/** What the editor's fields hold, as typed. */
export interface Draft {
  /** The group of a new reward ("": the default group). */
  groupId: string;
  event: Reward["event"];
  kind: Reward["kind"];
  /** A percentage ("20") or an amount in major units ("5.50"). */
  value: string;
  recurring: RecurringRule["duration"];
  months: string;
  products: string;
  prices: string;
  /** The preview's example payment (major units) and product. */
  amount: string;
  product: string;
}

/** A reward's terms as the API takes them. */
interface Terms {
  event: Reward["event"];
  kind: Reward["kind"];
  value: number;
  recurring?: RecurringRule;
  productIds: string[];
  priceIds: string[];
  tiers: TierRule | null;
}

export const newDraft = (groupId?: number): Draft => ({
  groupId: groupId === undefined ? "" : String(groupId),
  event: "sale",
  kind: "percentage",
  value: "",
  recurring: "lifetime",
  months: "12",
  products: "",
  prices: "",
  amount: "49",
  product: "",
});

/** The editor's fields filled from a reward (to edit it). */
export function draftOf(r: Reward, currency: string): Draft {
  const recurring = r.recurring ?? { duration: "lifetime" };
  return {
    ...newDraft(r.groupId),
    event: r.event,
    kind: r.kind,
    value: r.kind === "percentage" ? String(r.value / 100) : fromMinor(r.value, currency),
    recurring: recurring.duration,
    months: recurring.duration === "months" ? String(recurring.months) : "12",
    products: r.productIds.join(", "),
    prices: r.priceIds.join(", "),
  };
}

/** A lead pays a flat amount once: its kind is flat whatever the kind field said for a sale. */
const kindOf = (d: Draft): Reward["kind"] => (d.event === "lead" ? "flat" : d.kind);

/** An edit keeps the reward's tiers (the form does not change them) unless its event or kind changes. */
const keepsTiers = (d: Draft, editing: Reward | null): editing is Reward & { tiers: TierRule } => Boolean(editing?.tiers && editing.event === d.event && editing.kind === kindOf(d));

/** The draft's terms as the API takes them, or what is missing and the id of the field to fix. */
export function readTerms(d: Draft, editing: Reward | null, currency: string): { terms: Terms } | { error: string; field: string } {
  const kind = kindOf(d);
  const raw = d.value.trim();
  let value: number;
  if (kind === "percentage") {
    value = raw === "" ? NaN : Math.round(Number(raw) * 100);
    if (!Number.isFinite(value) || value < 1 || value > 10_000) return { error: "Enter a percentage from 0.01 to 100.", field: "r-value" };
  } else {
    value = toMinor(raw, currency);
    if (!Number.isFinite(value) || value < 1) return { error: `Enter an amount above zero in ${currency.toUpperCase()}.`, field: "r-value" };
  }
  const terms: Terms = { event: d.event, kind, value, productIds: [], priceIds: [], tiers: null };
  if (d.event === "sale") {
    if (d.recurring === "months") {
      const months = d.months.trim() === "" ? NaN : Number(d.months);
      if (!Number.isInteger(months) || months < 1 || months > 120) return { error: "Enter a number of months from 1 to 120.", field: "r-months" };
      terms.recurring = { duration: "months", months };
    } else terms.recurring = { duration: d.recurring };
    terms.productIds = idList(d.products);
    terms.priceIds = idList(d.prices);
    if (keepsTiers(d, editing)) terms.tiers = editing.tiers;
  }
  return { terms };
}

export function RewardEditor({
  groups,
  currency,
  draft,
  update,
  editing,
  onSaved,
  onCancel,
}: {
  groups: Group[];
  currency: string;
  draft: Draft;
  update: (patch: Partial<Draft>) => void;
  /** The reward being edited; null: the editor creates one. */
  editing: Reward | null;
  onSaved: (reward: Reward, edited: boolean) => Promise<void>;
  onCancel: () => void;
}) {
  const { programPath } = useConsole();
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [preview, setPreview] = useState("");
  const code = currency.toUpperCase();
  const lead = draft.event === "lead";
  const kind = kindOf(draft);
  const read = readTerms(draft, editing, currency);
  const groupId = groups.some((g) => String(g.id) === draft.groupId) ? draft.groupId : String(defaultGroup(groups)?.id ?? "");

  // The live preview: asked again a moment after the draft or the example changes; an answer overtaken by a later
  // change is dropped.
  const readKey = JSON.stringify(read);
  useEffect(() => {
    let current = true;
    const words = async (): Promise<string> => {
      if ("error" in read) return read.error;
      const terms = read.terms;
      if (terms.event === "lead") return `Each new customer a partner of this group refers pays ${money(terms.value, currency)}, once (leads your server reports with the API key).`;
      const amountCents = toMinor(draft.amount, currency);
      if (!Number.isFinite(amountCents) || amountCents < 1) return `Enter an example payment above zero in ${code}.`;
      const product = draft.product.trim();
      try {
        const answer = await api<RewardPreview>("POST", programPath("/rewards/preview"), { amountCents, draft: terms, ...(product ? { productId: product } : {}) });
        return previewWords(answer, amountCents, product, currency);
      } catch (e) {
        return `No preview: ${errorMessage(e)}`;
      }
    };
    const timer = setTimeout(() => void words().then((text) => current && setPreview(text)), PREVIEW_DELAY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [readKey, draft.amount, draft.product, currency]);

  const submit = async (event: Event) => {
    event.preventDefault();
    if ("error" in read) {
      setError(read.error);
      document.getElementById(read.field)?.focus();
      return;
    }
    setSaving(true);
    try {
      const saved = editing
        ? await api<Reward>("PUT", programPath(`/rewards/${editing.id}`), read.terms)
        : await api<Reward>("POST", programPath("/rewards"), { groupId: Number(groupId), ...read.terms });
      setError(null);
      setSaving(false);
      await onSaved(saved, Boolean(editing));
    } catch (e) {
      setError(errorMessage(e));
      setSaving(false);
    }
  };
  // Escape leaves edit mode, as Cancel editing does.
  const keyDown = (event: KeyboardEvent) => {
    if (event.key === "Escape" && editing) {
      event.preventDefault();
      onCancel();
    }
  };
  const recurringChoice = (duration: RecurringRule["duration"], label: string) => (
    <div class="choice">
      <input id={`r-rec-${duration}`} type="radio" name="recurring" value={duration} checked={draft.recurring === duration} onChange={() => update({ recurring: duration })} />
      <label for={`r-rec-${duration}`}>{label}</label>
    </div>
  );
  const tiers = editing?.tiers;

  return (
    <>
      <h2 id="editor-title" tabIndex={-1}>
        {editing ? `Edit reward #${editing.id} (version ${editing.version})` : "New reward"}
      </h2>
      <form aria-labelledby="editor-title" noValidate onSubmit={submit} onKeyDown={keyDown}>
        <div class="fields">
          <SelectField
            id="r-group"
            label="Group"
            value={groupId}
            disabled={Boolean(editing)}
            options={groups.map((g) => [String(g.id), groupOption(g)])}
            onChange={(e) => update({ groupId: e.currentTarget.value })}
          />
          <SelectField
            id="r-event"
            label="Pays for"
            value={draft.event}
            options={[
              ["sale", "Each sale"],
              ["lead", "Each new customer (lead)"],
            ]}
            onChange={(e) => update({ event: e.currentTarget.value as Reward["event"] })}
          />
          <SelectField
            id="r-kind"
            label="Kind"
            value={kind}
            disabled={lead}
            options={[
              ["percentage", "Percentage of the sale"],
              ["flat", "Flat amount"],
            ]}
            onChange={(e) => update({ kind: e.currentTarget.value as Reward["kind"] })}
          />
          <Field
            id="r-value"
            label={kind === "percentage" ? "Percentage (%)" : `Amount (${code})`}
            hint={kind === "percentage" ? "Of each sale line, up to 100%." : lead ? "Paid once per new customer." : "Paid per sale line."}
            type="number"
            inputMode="decimal"
            min="0"
            step="any"
            required
            value={draft.value}
            onInput={(e) => update({ value: e.currentTarget.value })}
          />
        </div>
        {!lead && (
          <>
            <fieldset>
              <legend>Which payments of a subscription earn</legend>
              {recurringChoice("first", "The first payment only")}
              {recurringChoice("months", "The first payment and renewals for a number of months")}
              <div class="indent">
                <label for="r-months">Months (1 to 120)</label>
                <input
                  id="r-months"
                  type="number"
                  inputMode="numeric"
                  min="1"
                  max="120"
                  step="1"
                  value={draft.months}
                  // Typing a number of months chooses the rule it belongs to.
                  onInput={(e) => update({ months: e.currentTarget.value, recurring: "months" })}
                />
              </div>
              {recurringChoice("lifetime", "Every payment for the subscription's life")}
            </fieldset>
            <div class="fields">
              <Field
                id="r-products"
                label="Only these products (optional)"
                type="text"
                autocomplete="off"
                spellcheck={false}
                aria-describedby="r-products-hint"
                value={draft.products}
                onInput={(e) => update({ products: e.currentTarget.value })}
              />
              <Field
                id="r-prices"
                label="Only these prices (optional)"
                type="text"
                autocomplete="off"
                spellcheck={false}
                aria-describedby="r-products-hint"
                value={draft.prices}
                onInput={(e) => update({ prices: e.currentTarget.value })}
              />
            </div>
            <p id="r-products-hint" class="hint muted">
              Product or price ids separated by commas (Stripe prod_… and price_…, or your own product ids). Empty: every sale.
            </p>
          </>
        )}
        {tiers && (
          <p class="muted">
            {keepsTiers(draft, editing) ? `Its tiers are kept: ${tierWords(tiers, editing.kind, currency)}.` : "Its tiers are dropped: they are in the reward's former kind."}
          </p>
        )}

        <div class="preview-box">
          <h3 id="preview-title">Preview</h3>
          <div class="fields">
            <Field
              id="p-amount"
              label={`Example payment (${code})`}
              type="number"
              inputMode="decimal"
              min="0"
              step="any"
              value={draft.amount}
              onInput={(e) => update({ amount: e.currentTarget.value })}
            />
            <Field
              id="p-product"
              label="Example product (optional)"
              type="text"
              autocomplete="off"
              spellcheck={false}
              value={draft.product}
              onInput={(e) => update({ product: e.currentTarget.value })}
            />
          </div>
          <p id="preview" class="preview" role="status" aria-live="polite" aria-atomic="true">
            {preview}
          </p>
        </div>

        <p class="actions">
          <button type="submit" disabled={saving}>
            {editing ? `Save as version ${editing.version + 1}` : "Create reward"}
          </button>
          {editing && (
            <button type="button" class="secondary" onClick={onCancel}>
              Cancel editing
            </button>
          )}
        </p>
        {error && <Alert>{error}</Alert>}
      </form>
    </>
  );
}
