/**
 * The embedded referrals page (/embed/programs/:programId/referrals; docs/embedded-referrals.md), in an iframe of the
 * merchant's own app. Its address carries an embed token (#token=..., or ?token=...; or the parent page posts
 * { type: "svc-embed-token", token }), which it exchanges once for an embedded session (POST
 * /api/partner/auth/embed-session) kept in memory only (no cookie: third-party iframes get none; no storage), then
 * sends as a Bearer header to the partner portal's reads of that one program: the referral link with a copy button and
 * a QR code, clicks, signups, sales, earnings, payouts and the rewards in words. An expired or unknown token, or a
 * session that ended, shows what to do: reload the merchant's page, which asks its server for a new token.
 */
import { render, type ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import QRCode from "qrcode";
import { readableBrandColor } from "../../../shared/domain/brand-color";
import { isLocale, type MessageKey } from "../../../shared/i18n";
import { count, dateTime, money } from "../lib/format";
import { setLanguage, t } from "../lib/i18n";
import type { Balance, PortalMe, PortalProgram } from "../portal/types";

/** An error of the API as this page reads it: its code says whether a reload can help. */
class EmbedError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, session: string | null, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (session) headers.Authorization = `Bearer ${session}`;
  const res = await fetch(path, { method, headers, credentials: "omit", body: body === undefined ? undefined : JSON.stringify(body) });
  const json: unknown = await res.json().catch(() => null);
  if (res.ok) return json as T;
  const error = (json as { error?: { code?: string; message?: string } } | null)?.error;
  throw new EmbedError(res.status, error?.code ?? "error", error?.message ?? `The request failed (HTTP ${res.status}).`);
}

/** The token of the page's address (fragment first: browsers never send it to a server), removed from the address bar. */
function tokenOfAddress(): string | null {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  const fromQuery = new URLSearchParams(location.search).get("token");
  const token = fromHash || fromQuery;
  if (token) history.replaceState(null, "", location.pathname);
  return token;
}

interface Stats {
  currency: string;
  from: string;
  totals: { clicks: number; leads: number; sales: number; revenueCents: number; commissionCents: number };
}
interface Rewards {
  currency: string;
  holdDays: number;
  rewards: string[];
  rewardAs: "cash" | "account_credit" | "stripe_balance";
  payoutMethod: "paypal" | "bank" | "stripe" | null;
  minPayoutCents: number;
}

/** How the user gets what they earn, in words: credit in the app, or cash by the payout method they chose (or still have to). */
function howPaid(r: Rewards): string {
  const from = r.minPayoutCents > 0 ? t("embed.from", { amount: money(r.minPayoutCents, r.currency) }) : "";
  if (r.rewardAs !== "cash") return t("embed.paid.credit", { from });
  if (!r.payoutMethod) return t("embed.paid.choose", { from });
  return t("embed.paid.by", { method: t(`payout.by.${r.payoutMethod}`), from });
}
interface Withdrawal {
  id: number;
  amountCents: number;
  currency: string;
  status: string;
  createdAt: string;
  paidAt?: string | null;
}

interface Data {
  program: PortalProgram;
  stats: Stats;
  rewards: Rewards;
  withdrawals: Withdrawal[];
}

type View = { kind: "waiting" } | { kind: "loading" } | { kind: "expired"; title: string } | { kind: "failed"; message: string } | { kind: "ready"; data: Data };

const programIdOfPath = (): number | null => {
  const match = /^\/embed\/programs\/([1-9][0-9]*)\/referrals\/?$/.exec(location.pathname);
  return match ? Number(match[1]) : null;
};

/** A year of figures, to today (the stats' longest range). */
function yearRange(): { from: string; to: string } {
  const to = new Date();
  const from = new Date(to.getTime() - 365 * 86_400_000);
  return { from: from.toISOString().slice(0, 10), to: to.toISOString().slice(0, 10) };
}

async function load(programId: number, session: string): Promise<Data> {
  const base = `/api/partner/programs/${programId}`;
  const { from, to } = yearRange();
  const [me, stats, rewards, withdrawals] = await Promise.all([
    call<PortalMe>("GET", "/api/partner/me", session),
    call<Stats>("GET", `${base}/stats?from=${from}&to=${to}`, session),
    call<Rewards>("GET", `${base}/rewards`, session),
    call<{ data: Withdrawal[] }>("GET", `${base}/withdrawals?limit=5`, session),
  ]);
  const program = me.programs.find((p) => p.programId === programId);
  if (!program) throw new EmbedError(404, "not_found", t("embed.unavailable"));
  return { program, stats, rewards, withdrawals: withdrawals.data };
}

/** Whether reloading the merchant's page (a new token) is the way out. */
const needsNewToken = (e: unknown) => e instanceof EmbedError && e.status === 401;

function App() {
  const programId = programIdOfPath();
  const [view, setView] = useState<View>({ kind: "waiting" });
  const session = useRef<string | null>(null);

  const start = async (token: string) => {
    if (!programId) return setView({ kind: "failed", message: t("embed.noProgram") });
    setView({ kind: "loading" });
    try {
      const opened = await call<{ session: string; programId: number }>("POST", "/api/partner/auth/embed-session", null, { token });
      if (opened.programId !== programId) throw new EmbedError(401, "embed_token_invalid", t("embed.otherProgram"));
      session.current = opened.session;
      setView({ kind: "ready", data: await load(programId, opened.session) });
    } catch (e) {
      show(e);
    }
  };

  const show = (e: unknown) => {
    if (needsNewToken(e)) {
      session.current = null;
      const code = e instanceof EmbedError ? e.code : "";
      setView({ kind: "expired", title: t(code === "embed_token_invalid" ? "embed.invalid.title" : "embed.expired.title") });
    } else setView({ kind: "failed", message: e instanceof Error ? e.message : String(e) });
  };

  useEffect(() => {
    const token = tokenOfAddress();
    if (token) void start(token);
    // The parent page may post the token instead of putting it in the address.
    const onMessage = (event: MessageEvent) => {
      const data = event.data as { type?: unknown; token?: unknown } | null;
      if (event.source !== window.parent || data?.type !== "svc-embed-token" || typeof data.token !== "string") return;
      void start(data.token);
    };
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  }, []);

  const refresh = async () => {
    if (!session.current || !programId) return;
    try {
      setView({ kind: "ready", data: await load(programId, session.current) });
    } catch (e) {
      show(e);
    }
  };

  return (
    <main class="embed" id="main">
      {view.kind === "waiting" && <Notice title={t("embed.title.referrals")}>{t("embed.waiting")}</Notice>}
      {view.kind === "loading" && <Notice title={t("embed.title.referrals")}>{t("embed.loading")}</Notice>}
      {view.kind === "expired" && (
        <Notice title={view.title} alert>
          {t("embed.expired.text")}
        </Notice>
      )}
      {view.kind === "failed" && (
        <Notice title={t("embed.failed.title")} alert>
          {t("embed.failed.text", { message: view.message })}
        </Notice>
      )}
      {view.kind === "ready" && <Referrals data={view.data} onRefresh={refresh} />}
    </main>
  );
}

function Notice({ title, alert, children }: { title: string; alert?: boolean; children: ComponentChildren }) {
  return (
    <section aria-labelledby="embed-title">
      <h1 id="embed-title">{title}</h1>
      <p role={alert ? "alert" : "status"}>{children}</p>
    </section>
  );
}

function Referrals({ data, onRefresh }: { data: Data; onRefresh: () => Promise<void> }) {
  const { program, stats, rewards, withdrawals } = data;
  const currency = program.currency;
  const balance: Balance | null = program.balance;
  const earned = balance ? balance.pendingCents + balance.creditedCents : stats.totals.commissionCents;
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  // The merchant's colour for links and buttons, darkened if white text on it would not be readable.
  useEffect(() => {
    if (program.brandColor) document.documentElement.style.setProperty("--accent", readableBrandColor(program.brandColor));
  }, [program.brandColor]);
  return (
    <>
      <section aria-labelledby="embed-title">
        {program.logoUrl && <img class="embed-logo" src={program.logoUrl} alt="" />}
        <h1 id="embed-title" ref={heading} tabIndex={-1} class="focus-target">
          {t("embed.heading", { program: program.name })}
        </h1>
        {rewards.rewards.length ? (
          <p>
            {t("embed.youEarn", { rewards: rewards.rewards.join("; ") })}
            {rewards.holdDays > 0 ? ` ${rewards.holdDays === 1 ? t("embed.holdOne") : t("embed.holdMany", { days: rewards.holdDays })}` : ""}
          </p>
        ) : (
          <p>{t("embed.share")}</p>
        )}
        <ReferralLink link={program.referralLink} />
      </section>
      <section aria-labelledby="figures-title">
        <h2 id="figures-title">{t("embed.results")}</h2>
        <div class="grid">
          <Figure label={t("embed.clicks")} value={count(program.clicks ?? stats.totals.clicks)} />
          <Figure label={t("embed.signups")} value={count(stats.totals.leads)} />
          <Figure label={t("embed.sales")} value={count(stats.totals.sales)} />
          <Figure label={t("embed.earned")} value={money(earned, currency)} />
          <Figure label={t("embed.paidOut")} value={money(balance?.paidCents ?? 0, currency)} />
          <Figure label={t("embed.ready")} value={money(balance?.balanceCents ?? 0, currency)} />
        </div>
      </section>
      <section aria-labelledby="payouts-title">
        <h2 id="payouts-title">{t("embed.payouts")}</h2>
        <p id="how-paid">
          {howPaid(rewards)}
          {rewards.rewardAs === "cash" && (
            <>
              {" "}
              <a href="/portal" target="_blank" rel="noopener">
                {t("embed.openPortal")}
              </a>
            </>
          )}
        </p>
        {withdrawals.length ? (
          <ul class="rows">
            {withdrawals.map((w) => (
              <li key={w.id}>
                {money(w.amountCents, w.currency)}: {payoutState(w.status)}, {dateTime(w.paidAt ?? w.createdAt)}
              </li>
            ))}
          </ul>
        ) : (
          <p>{t("embed.noPayouts")}</p>
        )}
        <button type="button" class="secondary" onClick={() => void onRefresh()}>
          {t("embed.refresh")}
        </button>
      </section>
    </>
  );
}

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <p class="figure">
      <span class="value">{value}</span>
      <span class="label">{label}</span>
    </p>
  );
}

/** The link in a read-only field (selectable where the clipboard is not allowed), a copy button and its QR code. */
function ReferralLink({ link }: { link: string | null }) {
  const [qr, setQr] = useState<string | null>(null);
  const [said, setSaid] = useState("");
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (!link) return;
    let current = true;
    QRCode.toDataURL(link, { errorCorrectionLevel: "M", margin: 2, width: 176 }).then(
      (url) => current && setQr(url),
      () => current && setQr(null),
    );
    return () => {
      current = false;
    };
  }, [link]);
  if (!link) return <p>{t("embed.noLink")}</p>;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(link);
      setSaid(t("embed.copied"));
    } catch {
      // The clipboard may be refused in a frame: the link is selected for the person to copy.
      field.current?.select();
      setSaid(t("embed.copyByHand"));
    }
  };
  return (
    <div class="referral-link">
      <label for="referral-link">{t("embed.linkLabel")}</label>
      <p class="copy-row">
        <input id="referral-link" ref={field} type="text" readOnly value={link} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
        <button type="button" onClick={() => void copy()}>
          {t("embed.copy")}
        </button>
      </p>
      <p class="status-line" role="status" aria-live="polite">
        {said}
      </p>
      {qr && <img class="qr" src={qr} alt={t("embed.qr")} width={176} height={176} />}
    </div>
  );
}

/** A payout's state in words ("On its way"); an unknown one as the API says it. */
const payoutState = (status: string): string => {
  const key = `payout.state.${status}`;
  return ["open", "processing", "paid", "failed", "cancelled"].includes(status) ? t(key as MessageKey) : status;
};

// The page's language: the merchant's choice for its user (?lang=de), else the browser's, else English.
const wanted = new URLSearchParams(location.search).get("lang");
setLanguage(isLocale(wanted) ? wanted : null);
render(<App />, document.getElementById("app")!);
