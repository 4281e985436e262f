/**
 * The program's postbacks (docs/partners.md, "Postbacks"): add a URL (its signing secret shown once), and for each
 * postback its state, a test event, disable or enable, and its recent deliveries with a retry for failed ones.
 */
import { useState } from "preact/hooks";
import { api, errorMessage, query, type Page } from "../lib/api";
import { day } from "../lib/format";
import { t } from "../lib/i18n";
import { Alert, CopyButton, Field, useAsync } from "../lib/ui";
import { programPath, Section, Table } from "./parts";

interface Postback {
  id: number;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  consecutiveFailures: number;
  disabledReason: string | null;
  createdAt: string;
}

interface Delivery {
  id: number;
  eventType: string;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
}

interface Actions {
  onError: (error: unknown) => void;
  onStatus: (text: string) => void;
}

export function Postbacks({ programId, onError, onStatus }: { programId: number } & Actions) {
  const list = useAsync(() => api<Postback[]>("GET", programPath(programId, "/postbacks")), [programId]);
  const [url, setUrl] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const add = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      const made = await api<Postback & { secret: string }>("POST", programPath(programId, "/postbacks"), { url });
      setSecret({ url: made.url, secret: made.secret });
      setUrl("");
      onStatus(t("postbacks.added"));
      list.reload();
    } catch (e) {
      setProblem(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Section id="postbacks" title={t("postbacks.title")}>
      <p class="muted">{t("postbacks.intro")}</p>
      <form onSubmit={(e) => void add(e)} class="postback-form">
        <Field label={t("postbacks.url")} type="url" required value={url} onInput={(e) => setUrl((e.currentTarget as HTMLInputElement).value)} error={problem ?? undefined} />
        <button type="submit" disabled={busy}>
          {t("postbacks.add")}
        </button>
      </form>
      {secret && (
        <div class="secret" role="region" aria-label={t("postbacks.secretRegion")}>
          <p>
            {t("postbacks.secretFor", { url: secret.url })} <code>{secret.secret}</code>
          </p>
          <CopyButton text={secret.secret} label={t("postbacks.copySecret")} />
        </div>
      )}
      {list.error && <Alert>{list.error}</Alert>}
      {list.data && list.data.length === 0 && <p class="muted">{t("postbacks.none")}</p>}
      {list.data && list.data.length > 0 && (
        <ul class="rows postbacks">
          {list.data.map((p) => (
            <PostbackRow key={p.id} programId={programId} postback={p} onChanged={list.reload} onError={onError} onStatus={onStatus} />
          ))}
        </ul>
      )}
    </Section>
  );
}

function PostbackRow({ programId, postback, onChanged, onError, onStatus }: { programId: number; postback: Postback; onChanged: () => void } & Actions) {
  const [open, setOpen] = useState(false);
  const [reload, setReload] = useState(0);
  const deliveries = useAsync(
    () => (open ? api<Page<Delivery>>("GET", programPath(programId, `/postbacks/${postback.id}/deliveries${query({ limit: 10 })}`)) : Promise.resolve(null)),
    [open, reload, programId, postback.id],
  );
  const act = async (path: string, done: string) => {
    try {
      await api("POST", programPath(programId, `/postbacks/${postback.id}${path}`));
      onStatus(done);
      onChanged();
      setReload((n) => n + 1);
    } catch (e) {
      onError(e);
    }
  };
  const state = postback.enabled ? t("postbacks.enabled") : postback.disabledReason ? t("postbacks.disabledWhy", { reason: postback.disabledReason }) : t("postbacks.disabled");
  return (
    <li data-postback={String(postback.id)}>
      <div>
        <strong class="postback-url">{postback.url}</strong> <span class={postback.enabled ? "ok state" : "warn state"}>{state}</span>
        <p class="muted">{t("postbacks.added.on", { events: postback.eventTypes.join(", "), date: day(postback.createdAt) })}</p>
      </div>
      <div class="actions">
        {postback.enabled && (
          <button type="button" class="secondary" aria-label={t("postbacks.testLabel", { url: postback.url })} onClick={() => void act("/test", t("postbacks.testQueued"))}>
            {t("postbacks.test")}
          </button>
        )}
        <button
          type="button"
          class="secondary"
          aria-label={t(postback.enabled ? "postbacks.disableLabel" : "postbacks.enableLabel", { url: postback.url })}
          onClick={() => void act(postback.enabled ? "/disable" : "/enable", t(postback.enabled ? "postbacks.wasDisabled" : "postbacks.wasEnabled"))}
        >
          {t(postback.enabled ? "postbacks.disable" : "postbacks.enable")}
        </button>
        <button type="button" class="secondary" aria-expanded={open} aria-label={t("postbacks.deliveriesLabel", { url: postback.url })} onClick={() => setOpen(!open)}>
          {t(open ? "postbacks.hideDeliveries" : "postbacks.deliveries")}
        </button>
      </div>
      {open && deliveries.data && (
        <Table
          caption={t("postbacks.recent", { url: postback.url })}
          headers={[
            [t("postbacks.col.when")],
            [t("postbacks.col.event")],
            [t("postbacks.col.status")],
            [t("postbacks.col.attempts"), true],
            [t("postbacks.col.answer")],
            [t("postbacks.col.action")],
          ]}
        >
          {deliveries.data.data.map((d) => (
            <tr key={d.id} data-delivery={String(d.id)}>
              <td class="date">{day(d.createdAt)}</td>
              <td>{d.eventType}</td>
              <td class="status">{d.status}</td>
              <td class="num">{d.attempts}</td>
              <td>{d.lastStatusCode ?? d.lastError ?? ""}</td>
              <td>
                {d.status === "failed" && (
                  <button type="button" class="secondary" aria-label={t("postbacks.retryLabel", { id: d.id })} onClick={() => void act(`/deliveries/${d.id}/retry`, t("postbacks.retried"))}>
                    {t("postbacks.retry")}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {open && deliveries.error && <Alert>{deliveries.error}</Alert>}
    </li>
  );
}
