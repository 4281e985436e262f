/**
 * Settings, Program: name, cookie window, hold days, default landing URL, allowed origins, (until the program's first
 * sale or commission) the currency, and applications (whether the public application page takes them, automatic
 * approval into a group, the page's description, questions and terms). Saving sends the fields with
 * PATCH /api/programs/:programId/settings and reloads the console's copy of the settings, so every screen shows the
 * new values.
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { Alert, CopyButton, Field, SelectField, StatusLine } from "../../lib/ui";
import { groupLabel, useGroups } from "../screens/partners";
import { applyPageUrl, useConsole, type ApplicationSettings, type ProgramSettings } from "../session";

/** What the API accepts for applications (services/programs). */
const LIMITS = { description: 2000, questions: 5, question: 200, terms: 5000 } as const;

interface Draft {
  name: string;
  currency: string;
  cookieWindowDays: string;
  holdDays: string;
  defaultLandingUrl: string;
  brandColor: string;
  logoUrl: string;
  allowedOrigins: string;
  applicationsOpen: boolean;
  autoApprove: boolean;
  /** "" for the default group. */
  autoApproveGroupId: string;
  applicationDescription: string;
  questions: string[];
  terms: string;
}

const draftOf = (s: ProgramSettings): Draft => ({
  name: s.name,
  currency: s.currency.toUpperCase(),
  cookieWindowDays: String(s.cookieWindowDays),
  holdDays: String(s.holdDays),
  defaultLandingUrl: s.defaultLandingUrl ?? "",
  brandColor: s.brandColor ?? "",
  logoUrl: s.logoUrl ?? "",
  allowedOrigins: s.allowedOrigins.join("\n"),
  applicationsOpen: s.applications.open,
  autoApprove: s.applications.autoApprove,
  autoApproveGroupId: s.applications.autoApproveGroupId === null ? "" : String(s.applications.autoApproveGroupId),
  applicationDescription: s.applications.description,
  questions: s.applications.questions,
  terms: s.applications.terms,
});

/** The applications part of the PATCH: empty questions left out. */
const applicationsOf = (d: Draft): ApplicationSettings => ({
  open: d.applicationsOpen,
  autoApprove: d.autoApprove,
  autoApproveGroupId: d.autoApproveGroupId === "" ? null : Number(d.autoApproveGroupId),
  description: d.applicationDescription,
  questions: d.questions.map((q) => q.trim()).filter(Boolean),
  terms: d.terms,
});

/** The allowed origins as typed: one a line, blank lines left out. */
const originsOf = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);

export function ProgramSettingsSection() {
  const { settings, program, programPath, reloadSettings, can } = useConsole();
  const writable = can("programs:write");
  const [draft, setDraft] = useState<Draft>(() => draftOf(settings));
  const [said, setSaid] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // The console's settings changed (saved here, normalised by the API): show them as they are now.
  useEffect(() => setDraft(draftOf(settings)), [settings]);

  const edit = (field: keyof Draft) => (event: Event) => {
    const input = event.currentTarget as HTMLInputElement;
    setDraft({ ...draft, [field]: input.type === "checkbox" ? input.checked : input.value });
    setSaid("");
  };

  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaid("");
    const body: Record<string, unknown> = {
      name: draft.name.trim(),
      cookieWindowDays: Number(draft.cookieWindowDays),
      holdDays: Number(draft.holdDays),
      defaultLandingUrl: draft.defaultLandingUrl.trim() || null,
      brandColor: draft.brandColor.trim() || null,
      logoUrl: draft.logoUrl.trim() || null,
      allowedOrigins: originsOf(draft.allowedOrigins),
      applications: applicationsOf(draft),
    };
    if (!settings.currencyFixed) body.currency = draft.currency.trim();
    try {
      await api<ProgramSettings>("PATCH", programPath("/settings"), body);
      setSaid("Settings saved.");
      reloadSettings();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  if (!writable) {
    return (
      <section aria-labelledby="program-settings-title">
        <h2 id="program-settings-title">Program</h2>
        <p class="muted">Read-only: your role ({program.role}) cannot change the settings; an owner or admin can.</p>
        <dl class="facts">
          <dt>Name</dt>
          <dd>{settings.name}</dd>
          <dt>Currency</dt>
          <dd>{settings.currency.toUpperCase()}</dd>
          <dt>Cookie window</dt>
          <dd>{settings.cookieWindowDays} days</dd>
          <dt>Hold days</dt>
          <dd>{settings.holdDays} days</dd>
          <dt>Default landing URL</dt>
          <dd class="terms">{settings.defaultLandingUrl ?? "None: referral links lead to the first allowed origin"}</dd>
          <dt>Brand on the embedded referrals page</dt>
          <dd class="terms">{settings.brandColor || settings.logoUrl ? [settings.brandColor, settings.logoUrl].filter(Boolean).join(", ") : "None: the page's own colours"}</dd>
          <dt>Allowed origins</dt>
          <dd class="terms">{settings.allowedOrigins.length ? settings.allowedOrigins.join(", ") : "Any (none listed)"}</dd>
          <dt>Applications</dt>
          <dd>
            {settings.applications.open ? "Open" : "Closed"}
            {settings.applications.open && settings.applications.autoApprove ? ", approved automatically" : ""}
          </dd>
          <dt>Application page</dt>
          <dd class="terms">
            <a href={applyPageUrl(program.id)}>{applyPageUrl(program.id)}</a>
          </dd>
          <dt>Questions</dt>
          <dd>
            {settings.applications.questions.length ? (
              <ol class="compact">
                {settings.applications.questions.map((q, i) => (
                  <li key={i}>{q}</li>
                ))}
              </ol>
            ) : (
              "None"
            )}
          </dd>
        </dl>
      </section>
    );
  }

  return (
    <section aria-labelledby="program-settings-title">
      <h2 id="program-settings-title">Program</h2>
      <form onSubmit={save} aria-labelledby="program-settings-title">
        <div class="fields">
          <Field label="Program name" name="name" value={draft.name} onInput={edit("name")} required maxLength={200} />
          {settings.currencyFixed ? (
            <div class="field">
              <p class="label-like">Currency</p>
              <p>
                <strong>{settings.currency.toUpperCase()}</strong>
              </p>
              <p class="hint muted">Fixed: the program has a sale or a commission.</p>
            </div>
          ) : (
            <Field
              label="Currency (ISO 4217 code)"
              name="currency"
              value={draft.currency}
              onInput={edit("currency")}
              required
              minLength={3}
              maxLength={3}
              autocomplete="off"
              hint="Can change until the program's first sale or commission; then it is fixed."
            />
          )}
          <Field
            label="Cookie window (days)"
            name="cookieWindowDays"
            type="number"
            min={1}
            max={400}
            value={draft.cookieWindowDays}
            onInput={edit("cookieWindowDays")}
            required
            hint="How long the browser snippet keeps a referral click: 1 to 400 days."
          />
          <Field
            label="Hold days"
            name="holdDays"
            type="number"
            min={0}
            max={365}
            value={draft.holdDays}
            onInput={edit("holdDays")}
            required
            hint="Days a commission of the default group is held before it is credited (0 to 365); the hourly credit run then credits it, so 0 means within the hour. Applies to commissions created from now on."
          />
        </div>
        <div class="wide-field">
          <Field
            label="Default landing URL"
            name="defaultLandingUrl"
            type="url"
            value={draft.defaultLandingUrl}
            onInput={edit("defaultLandingUrl")}
            placeholder="https://shop.example/pricing"
            hint="Where partners' referral links lead. Leave empty for the first allowed origin."
          />
        </div>
        <div class="fields">
          <Field
            label="Brand colour"
            name="brandColor"
            value={draft.brandColor}
            onInput={edit("brandColor")}
            placeholder="#6d28d9"
            pattern="#[0-9a-fA-F]{6}"
            hint="For the embedded referrals page in your app (#rrggbb; darkened there if white text on it would be hard to read). Empty: the page's own."
          />
          <Field
            label="Logo URL"
            name="logoUrl"
            type="url"
            value={draft.logoUrl}
            onInput={edit("logoUrl")}
            placeholder="https://shop.example/logo.svg"
            hint="Shown on the embedded referrals page. Empty: none."
          />
        </div>
        <div class="field">
          <label for="allowed-origins">Allowed origins (one per line)</label>
          <textarea
            id="allowed-origins"
            name="allowedOrigins"
            rows={4}
            value={draft.allowedOrigins}
            onInput={edit("allowedOrigins")}
            placeholder="https://shop.example"
            aria-describedby="allowed-origins-hint"
          />
          <p id="allowed-origins-hint" class="hint muted">
            The sites whose pages may send clicks and signups with the browser snippet, such as https://shop.example (no path). Leave empty to allow any.
          </p>
        </div>
        <ApplicationsFieldset draft={draft} setDraft={(next) => (setDraft(next), setSaid(""))} edit={edit} />
        <p>
          <button type="submit" disabled={busy}>
            Save settings
          </button>
        </p>
        {error && <Alert>{error}</Alert>}
        <StatusLine text={said} />
      </form>
    </section>
  );
}

/**
 * The Applications fieldset: whether the public page takes applications, its address, automatic approval into a
 * group, and what the page shows (description, up to five questions, terms).
 */
function ApplicationsFieldset({ draft, setDraft, edit }: { draft: Draft; setDraft: (draft: Draft) => void; edit: (field: keyof Draft) => (event: Event) => void }) {
  const { program } = useConsole();
  const groups = useGroups();
  const url = applyPageUrl(program.id);
  const questionsRef = useRef<HTMLDivElement>(null);
  // After adding or removing a question, where the focus goes: the new input, or the one that took the removed one's place.
  const [focusQuestion, setFocusQuestion] = useState<number | null>(null);
  useLayoutEffect(() => {
    if (focusQuestion === null) return;
    const inputs = questionsRef.current?.querySelectorAll("input");
    const target = inputs?.[Math.min(focusQuestion, inputs.length - 1)] ?? questionsRef.current?.querySelector<HTMLElement>("button.add-question");
    target?.focus();
    setFocusQuestion(null);
  }, [focusQuestion]);

  const defaultGroup = groups.data?.find((g) => g.isDefault);
  const groupOptions: Array<[string, string]> = [
    ["", defaultGroup ? groupLabel(defaultGroup) : "The default group"],
    ...(groups.data ?? []).filter((g) => !g.isDefault).map((g): [string, string] => [String(g.id), g.name]),
  ];
  const setQuestion = (i: number) => (event: Event) => setDraft({ ...draft, questions: draft.questions.map((q, j) => (j === i ? (event.currentTarget as HTMLInputElement).value : q)) });
  const addQuestion = () => {
    setDraft({ ...draft, questions: [...draft.questions, ""] });
    setFocusQuestion(draft.questions.length);
  };
  const removeQuestion = (i: number) => {
    setDraft({ ...draft, questions: draft.questions.filter((_, j) => j !== i) });
    setFocusQuestion(i);
  };

  return (
    <fieldset class="applications-settings">
      <legend>Applications</legend>
      <div class="choice">
        <input type="checkbox" id="applications-open" checked={draft.applicationsOpen} onChange={edit("applicationsOpen")} aria-describedby="applications-open-hint" />
        <label for="applications-open">Accept applications</label>
      </div>
      <p id="applications-open-hint" class="hint muted indent">
        Anyone may apply on the program's public page; you decide under Partners, Applications.
      </p>
      <p class="label-like">Application page</p>
      <div class="copy-row">
        <code class="secret" id="apply-url">
          {url}
        </code>
        <CopyButton text={url} label="Copy link" />
        <a class="button secondary" href={url} target="_blank" rel="noopener">
          Open the page<span class="visually-hidden"> (in a new tab)</span>
        </a>
      </div>
      <p class="hint muted">Link to it from your site. While applications are closed it says so and shows no form.</p>

      <div class="choice">
        <input type="checkbox" id="auto-approve" checked={draft.autoApprove} onChange={edit("autoApprove")} aria-describedby="auto-approve-hint" />
        <label for="auto-approve">Approve automatically</label>
      </div>
      <p id="auto-approve-hint" class="hint muted indent">
        Applicants join at once and get a sign-in link to the partner portal by email, without waiting for you.
      </p>
      <div class="indent-field">
        <SelectField
          label="Group of partners approved automatically"
          id="auto-approve-group"
          value={draft.autoApproveGroupId}
          onChange={edit("autoApproveGroupId")}
          disabled={!draft.autoApprove}
          options={groupOptions}
        />
      </div>

      <div class="field">
        <label for="application-description">Description on the application page</label>
        <textarea
          id="application-description"
          rows={4}
          maxLength={LIMITS.description}
          value={draft.applicationDescription}
          onInput={edit("applicationDescription")}
          aria-describedby="application-description-hint"
        />
        <p id="application-description-hint" class="hint muted">
          What partners earn and whom you are looking for; plain text, line breaks kept (up to 2,000 characters).
        </p>
      </div>

      <div class="questions" ref={questionsRef}>
        <p class="label-like">Questions for applicants</p>
        <p class="hint muted">Up to five, each up to 200 characters; applicants must answer each one. An empty question is left out.</p>
        {draft.questions.length === 0 && <p class="muted">No questions: applicants give their name, email, website and how they will promote you.</p>}
        {draft.questions.map((q, i) => (
          <div class="question-row" key={i}>
            <Field label={`Question ${i + 1}`} value={q} onInput={setQuestion(i)} maxLength={LIMITS.question} />
            <button type="button" class="secondary" onClick={() => removeQuestion(i)} aria-label={`Remove question ${i + 1}`}>
              Remove
            </button>
          </div>
        ))}
        {draft.questions.length < LIMITS.questions && (
          <p>
            <button type="button" class="secondary add-question" onClick={addQuestion}>
              Add a question
            </button>
          </p>
        )}
      </div>

      <div class="field">
        <label for="application-terms">Terms applicants accept</label>
        <textarea id="application-terms" rows={6} maxLength={LIMITS.terms} value={draft.terms} onInput={edit("terms")} aria-describedby="application-terms-hint" />
        <p id="application-terms-hint" class="hint muted">
          Shown in a box with an “I accept the terms” checkbox applicants must tick. Leave empty for none (up to 5,000 characters).
        </p>
      </div>
    </fieldset>
  );
}
