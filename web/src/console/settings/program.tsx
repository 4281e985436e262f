/**
 * Settings, Program: name, cookie window, hold days, default landing URL, allowed origins and (until the program's
 * first sale or commission) the currency. Saving sends the fields with PATCH /api/programs/:programId/settings and
 * reloads the console's copy of the settings, so every screen shows the new values.
 */
import { useEffect, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { Alert, Field, StatusLine } from "../../lib/ui";
import { useConsole, type ProgramSettings } from "../session";

interface Draft {
  name: string;
  currency: string;
  cookieWindowDays: string;
  holdDays: string;
  defaultLandingUrl: string;
  allowedOrigins: string;
}

const draftOf = (s: ProgramSettings): Draft => ({
  name: s.name,
  currency: s.currency.toUpperCase(),
  cookieWindowDays: String(s.cookieWindowDays),
  holdDays: String(s.holdDays),
  defaultLandingUrl: s.defaultLandingUrl ?? "",
  allowedOrigins: s.allowedOrigins.join("\n"),
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
    setDraft({ ...draft, [field]: (event.currentTarget as HTMLInputElement).value });
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
      allowedOrigins: originsOf(draft.allowedOrigins),
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
          <dt>Allowed origins</dt>
          <dd class="terms">{settings.allowedOrigins.length ? settings.allowedOrigins.join(", ") : "Any (none listed)"}</dd>
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
            hint="Days a commission of the default group is held before it is credited (0 to 365); applies to commissions created from now on."
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
