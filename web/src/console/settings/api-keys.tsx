/**
 * Settings, API keys: the keys that authenticate the merchant's server to the API, each with what it may do (a preset
 * of scopes: docs/api.md). A new key's secret is in the create answer only, so it is shown once here, with a copy
 * button; the list shows each key's access, prefix, when it was created and last used, and retired keys. Retiring asks
 * once more: calls with the key are refused at once.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorMessage } from "../../lib/api";
import { dateTime } from "../../lib/format";
import { Alert, CopyButton, Field, SelectField, StatusLine, useAsync } from "../../lib/ui";
import { useConsole } from "../session";
import type { ScopePreset } from "../../../../shared/domain/api-key-scopes";

/** The presets the form offers, as the list names them. */
const PRESET_TEXT: Record<ScopePreset, string> = {
  tracking: "Tracking only",
  read_only: "Read only",
  full_access: "Full access",
};

/** The form's choices: the presets, and a key that only issues embed tokens (embed:write, in no preset: docs/embedded-referrals.md). */
const ACCESS_CHOICES: Array<[string, string]> = [...Object.entries(PRESET_TEXT), ["embed", "Embedded referrals only"]];

/** What the list says a key may do: its preset's name, the embed-only key's, else its scopes. */
const accessText = (k: Pick<ApiKeyRow, "preset" | "scopes">) => (k.preset ? PRESET_TEXT[k.preset] : k.scopes.join(" ") === "embed:write" ? "Embedded referrals only" : k.scopes.join(", "));

interface ApiKeyRow {
  id: number;
  programId: number;
  name: string | null;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  retiredAt: string | null;
  scopes: string[];
  preset: ScopePreset | null;
}

const keyLabel = (k: Pick<ApiKeyRow, "name" | "prefix">): string => k.name || k.prefix;

export function ApiKeys() {
  const { program, programPath, can } = useConsole();
  const writable = can("programs:write");
  const [round, setRound] = useState(0);
  const keys = useAsync(() => api<{ data: ApiKeyRow[] }>("GET", programPath("/api-keys")), [program.id, round]);
  const [created, setCreated] = useState<(ApiKeyRow & { apiKey: string }) | null>(null);
  const [confirming, setConfirming] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [said, setSaid] = useState("");
  const [busy, setBusy] = useState(false);
  const shown = useRef<HTMLHeadingElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);

  // The new key's box takes the focus, so a screen reader reads the secret and its warning next.
  useEffect(() => {
    if (created) shown.current?.focus();
  }, [created]);
  useEffect(() => {
    if (confirming !== null) cancel.current?.focus();
  }, [confirming]);

  /** Cancel: the Retire button is back, with the focus. */
  const stopConfirming = (id: number) => {
    setConfirming(null);
    requestAnimationFrame(() => document.getElementById(`retire-key-${id}`)?.focus());
  };

  const create = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    const name = String(fields.get("name") ?? "").trim();
    const preset = String(fields.get("preset") ?? "tracking");
    setBusy(true);
    setError(null);
    setSaid("");
    try {
      const access = preset === "embed" ? { scopes: ["embed:write"] } : { preset };
      const key = await api<ApiKeyRow & { apiKey: string }>("POST", programPath("/api-keys"), { name, ...access });
      setCreated(key);
      form.reset();
      setRound((n) => n + 1);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const retire = async (key: ApiKeyRow) => {
    setError(null);
    try {
      await api("POST", programPath(`/api-keys/${key.id}/retire`));
      setConfirming(null);
      if (created?.id === key.id) setCreated(null);
      setSaid(`Key ${keyLabel(key)} retired: calls with it are refused from now on.`);
      setRound((n) => n + 1);
    } catch (e) {
      setError(errorMessage(e));
    }
  };

  return (
    <>
      <section aria-labelledby="api-keys-title">
        <h2 id="api-keys-title">API keys</h2>
        <p>
          Your server calls the API with a key of this program (Authorization: Bearer &lt;key&gt;). Keep keys on your server, never in a web page. Tracking only sends clicks, leads, sales
          and refunds; read only reads partners, commissions, payouts and the rest, and tracks nothing; full access does both and may change them. Embedded referrals only issues the tokens
          of the referrals page you embed in your app (your users as partners), and nothing else.
        </p>
        {writable ? (
          <form class="controls" onSubmit={create} aria-label="Create an API key">
            <Field label="Key name" name="name" required maxLength={100} placeholder="Production server" hint="What the key is for; the list shows it." />
            <SelectField label="Access" name="preset" options={ACCESS_CHOICES} />
            <div>
              <button type="submit" disabled={busy}>
                Create key
              </button>
            </div>
          </form>
        ) : (
          <p class="muted">Read-only: your role ({program.role}) cannot create or retire keys; an owner or admin can.</p>
        )}
        {created && (
          <div class="secret-box">
            <h3 id="new-key-title" ref={shown} tabIndex={-1}>
              New key “{keyLabel(created)}”
            </h3>
            <p class="copy-row">
              <code class="secret" id="new-key">
                {created.apiKey}
              </code>
              <CopyButton text={created.apiKey} label="Copy key" />
            </p>
            <p class="warn">
              <strong>Copy it now: it won't be shown again.</strong> Only a hash of it is stored; the list below shows its prefix.
            </p>
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              I have copied it
            </button>
          </div>
        )}
        {error && <Alert>{error}</Alert>}
        <StatusLine text={said} />
      </section>

      <section aria-labelledby="api-keys-list">
        <h2 id="api-keys-list">Keys of this program</h2>
        {keys.error && <Alert>{keys.error}</Alert>}
        <div class="table-wrap">
          <table aria-busy={keys.loading}>
            <caption class="visually-hidden">API keys of the program, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Access</th>
                <th scope="col">Prefix</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                {writable && <th scope="col">Action</th>}
              </tr>
            </thead>
            <tbody>
              {keys.data?.data.map((k) => (
                <tr key={k.id} data-key={k.id}>
                  <td>{k.name ?? <span class="muted">No name</span>}</td>
                  <td>{accessText(k)}</td>
                  <td>
                    <code>{k.prefix}</code>
                  </td>
                  <td>{dateTime(k.createdAt)}</td>
                  <td>{k.lastUsedAt ? dateTime(k.lastUsedAt) : "Never"}</td>
                  <td>{k.retiredAt ? `Retired ${dateTime(k.retiredAt)}` : "Active"}</td>
                  {writable && (
                    <td>
                      {!k.retiredAt &&
                        (confirming === k.id ? (
                          <div class="confirm" role="group" aria-label={`Retire key ${keyLabel(k)}?`}>
                            <p>Retire it? Calls with this key are refused at once.</p>
                            <span class="actions">
                              <button type="button" class="secondary" ref={cancel} onClick={() => stopConfirming(k.id)}>
                                Cancel
                              </button>
                              <button type="button" onClick={() => retire(k)}>
                                Yes, retire {keyLabel(k)}
                              </button>
                            </span>
                          </div>
                        ) : (
                          <button type="button" class="secondary" id={`retire-key-${k.id}`} onClick={() => setConfirming(k.id)} aria-label={`Retire key ${keyLabel(k)}`}>
                            Retire
                          </button>
                        ))}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {keys.data && keys.data.data.length === 0 && <p class="muted">No key yet.</p>}
      </section>
    </>
  );
}
