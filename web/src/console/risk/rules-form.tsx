/**
 * Risk, Rules: each fraud rule of the program on or off, with its settings (GET/PUT /api/programs/:programId/
 * fraud-settings), saved with one button. Each rule says what it looks for in the merchant's words
 * (FRAUD_RULE_TEXT); a value the form or the API refuses is shown under its field, which takes the focus. Without
 * programs:write the rules read as text.
 */
import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, errorMessage, invalidField } from "../../lib/api";
import { count } from "../../lib/format";
import { Alert, Field, FieldError, useAsync } from "../../lib/ui";
import { useConsole } from "../session";
import { FRAUD_RULES, FRAUD_RULE_TEXT, NUMBER_SETTINGS, RULE_NAME, type FraudRule, type FraudSettings } from "./model";

/** The form's values as typed: the switches, the numbers as text (checked on save), the domains one a line. */
interface Draft {
  enabled: Record<FraudRule, boolean>;
  /** By `${rule}.${field}`. */
  numbers: Record<string, string>;
  domains: string;
}

const settingKey = (rule: FraudRule, field: string): string => `${rule}.${field}`;
/** A field's element id: its errors focus it. */
const fieldId = (key: string): string => `fraud-${key.replace(/[._]/g, "-")}`;
const DOMAINS_KEY = "banned_referrer.domains";

function draftOf(s: FraudSettings): Draft {
  const numbers: Record<string, string> = {};
  for (const { rule, field } of NUMBER_SETTINGS) numbers[settingKey(rule, field)] = String((s[rule] as unknown as Record<string, number>)[field] ?? "");
  return {
    enabled: Object.fromEntries(FRAUD_RULES.map((rule) => [rule, !!s[rule]?.enabled])) as Record<FraudRule, boolean>,
    numbers,
    domains: (s.banned_referrer?.domains ?? []).join("\n"),
  };
}

/** The domains as typed: one a line (commas too), blank ones left out. */
const domainsOf = (text: string): string[] =>
  text
    .split(/[\n,]/)
    .map((d) => d.trim())
    .filter(Boolean);

/** The PUT's body (every rule whole), or the fields whose values are not numbers in their range. */
function bodyOf(d: Draft): { body: Record<string, Record<string, unknown>>; errors: Record<string, string> } {
  const body: Record<string, Record<string, unknown>> = Object.fromEntries(FRAUD_RULES.map((rule) => [rule, { enabled: d.enabled[rule] }]));
  const errors: Record<string, string> = {};
  for (const { rule, field, min, max } of NUMBER_SETTINGS) {
    const key = settingKey(rule, field);
    const text = d.numbers[key].trim();
    const n = Number(text);
    if (text === "" || !Number.isInteger(n) || n < min || (max !== undefined && n > max))
      errors[key] = max === undefined ? `Enter a whole number of ${count(min)} or more.` : `Enter a whole number from ${count(min)} to ${count(max)}.`;
    else body[rule][field] = n;
  }
  body.banned_referrer.domains = domainsOf(d.domains);
  return { body, errors };
}

/** The field a refusal names ("click_injection.seconds", "banned_referrer.domains.0", "paid_traffic"): its key here. */
function refusedKey(field: string): string | null {
  for (const { rule, field: name } of NUMBER_SETTINGS) if (field === settingKey(rule, name) || field.startsWith(`${settingKey(rule, name)}.`)) return settingKey(rule, name);
  if (field === DOMAINS_KEY || field.startsWith(`${DOMAINS_KEY}.`)) return DOMAINS_KEY;
  const rule = FRAUD_RULES.find((r) => field === r || field.startsWith(`${r}.`));
  return rule ?? null;
}

export function RulesForm({ say }: { say: (text: string) => void }) {
  const { program, programPath, can } = useConsole();
  const writable = can("programs:write");
  const saved = useAsync(() => api<{ settings: FraudSettings }>("GET", programPath("/fraud-settings")), [program.id]);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (saved.data) setDraft(draftOf(saved.data.settings));
  }, [saved.data]);

  const edit = (change: (d: Draft) => Draft) => {
    if (draft) setDraft(change(draft));
    say("");
  };

  const save = async (event: Event) => {
    event.preventDefault();
    if (!draft) return;
    setError(null);
    say("");
    const { body, errors: wrong } = bodyOf(draft);
    setErrors(wrong);
    const first = Object.keys(wrong)[0];
    if (first) {
      document.getElementById(fieldId(first))?.focus();
      return;
    }
    setBusy(true);
    try {
      const { settings } = await api<{ settings: FraudSettings }>("PUT", programPath("/fraud-settings"), body);
      setDraft(draftOf(settings));
      say("Fraud rules saved.");
    } catch (e) {
      const invalid = invalidField(e);
      const key = invalid && refusedKey(invalid.field);
      if (invalid && key) {
        setErrors({ [key]: invalid.rule });
        document.getElementById(fieldId(key))?.focus();
      } else setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const s = saved.data?.settings;
  return (
    <section aria-labelledby="fraud-rules-title">
      <h2 id="fraud-rules-title">Fraud rules</h2>
      <p>
        A conversion that an enabled rule flags is held: its commission waits under Reviews until you clear it (it then proceeds as usual) or reject it (it is voided and the partner is told
        why in plain words).
      </p>
      {saved.error && <Alert>{saved.error}</Alert>}
      {!s && !saved.error && <p class="muted">Loading…</p>}
      {s && !writable && <ReadOnlyRules settings={s} role={program.role} />}
      {s && draft && writable && (
        <form class="fraud-rules" aria-labelledby="fraud-rules-title" onSubmit={save} noValidate>
          <ul class="rules">
            {FRAUD_RULES.map((rule) => {
              const id = fieldId(rule);
              return (
                <li key={rule}>
                  <div class="choice">
                    <input
                      type="checkbox"
                      id={id}
                      checked={draft.enabled[rule]}
                      aria-describedby={errors[rule] ? `${id}-hint ${id}-error` : `${id}-hint`}
                      aria-invalid={errors[rule] ? true : undefined}
                      onChange={(e) => edit((d) => ({ ...d, enabled: { ...d.enabled, [rule]: (e.currentTarget as HTMLInputElement).checked } }))}
                    />
                    <div>
                      <label for={id}>{RULE_NAME[rule]}</label>
                      <p class="hint muted" id={`${id}-hint`}>
                        {FRAUD_RULE_TEXT[rule].merchant}
                      </p>
                      <FieldError id={`${id}-error`} error={errors[rule]} />
                    </div>
                  </div>
                  <RuleSettings rule={rule} draft={draft} errors={errors} edit={edit} />
                </li>
              );
            })}
          </ul>
          <p>
            <button type="submit" disabled={busy}>
              Save rules
            </button>
          </p>
        </form>
      )}
      {error && <Alert>{error}</Alert>}
    </section>
  );
}

/** A rule's settings under its switch: its numbers, or the banned domains. */
function RuleSettings({ rule, draft, errors, edit }: { rule: FraudRule; draft: Draft; errors: Record<string, string>; edit: (change: (d: Draft) => Draft) => void }) {
  const numbers = NUMBER_SETTINGS.filter((n) => n.rule === rule);
  if (rule === "banned_referrer") {
    const id = fieldId(DOMAINS_KEY);
    const error = errors[DOMAINS_KEY];
    return (
      <div class="rule-settings">
        <div class="field">
          <label for={id}>Banned domains (one per line)</label>
          <textarea
            id={id}
            rows={3}
            value={draft.domains}
            placeholder="coupons.example"
            aria-describedby={error ? `${id}-hint ${id}-error` : `${id}-hint`}
            aria-invalid={error ? true : undefined}
            onInput={(e) => edit((d) => ({ ...d, domains: (e.currentTarget as HTMLTextAreaElement).value }))}
          />
          <p class="hint muted" id={`${id}-hint`}>
            A click referred from one of these domains, or from a subdomain of one, is flagged.
          </p>
          <FieldError id={`${id}-error`} error={error} />
        </div>
      </div>
    );
  }
  if (numbers.length === 0) return null;
  return (
    <div class="rule-settings fields">
      {numbers.map(({ field, label, hint, min, max }) => {
        const key = settingKey(rule, field);
        return (
          <Field
            key={key}
            id={fieldId(key)}
            label={label}
            hint={hint}
            type="number"
            inputMode="numeric"
            min={min}
            max={max}
            step={1}
            value={draft.numbers[key]}
            error={errors[key]}
            onInput={(e) => edit((d) => ({ ...d, numbers: { ...d.numbers, [key]: (e.currentTarget as HTMLInputElement).value } }))}
          />
        );
      })}
    </div>
  );
}

/** The rules in words, for a role that cannot change them. */
function ReadOnlyRules({ settings: s, role }: { settings: FraudSettings; role: string }) {
  const details = (rule: FraudRule): string => {
    if (rule === "banned_referrer") return s.banned_referrer.domains.length ? `: ${s.banned_referrer.domains.join(", ")}` : ": no domain listed";
    if (rule === "click_injection") return `: within ${count(s.click_injection.seconds)} seconds`;
    if (rule === "address_velocity") return `: more than ${count(s.address_velocity.perDay)} a day`;
    if (rule === "refund_rate") return `: over ${count(s.refund_rate.percent)}% refunded, from ${count(s.refund_rate.minSales)} sales`;
    return "";
  };
  return (
    <>
      <p class="muted">Read-only: your role ({role}) cannot change the rules; an owner or admin can.</p>
      <dl class="facts">
        {FRAUD_RULES.map((rule) => (
          <Fragment key={rule}>
            <dt>{RULE_NAME[rule]}</dt>
            <dd>{s[rule]?.enabled ? `On${details(rule)}` : "Off"}</dd>
          </Fragment>
        ))}
      </dl>
    </>
  );
}
