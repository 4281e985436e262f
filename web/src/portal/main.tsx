/**
 * The partner portal (/portal and /portal/sign-in; docs/partners.md): sign-in by emailed link, then per program the
 * link builder with its QR code, clicks, balance, activity over time, notices, commissions with their rewards and
 * refunds, referred customers (masked) and payouts; and the partner's profile with their payout details
 * (/portal#profile, from the header), with the Stripe account per program for a partner paid through Stripe
 * (Stripe's onboarding comes back to /portal?stripe=return). It talks only to /api/partner on this origin (the
 * session is the HttpOnly svc_partner_session cookie). The partner and the chosen program's lists load together and
 * replace the view at once, on Refresh and every 30 seconds while the tab is visible, so a refresh never shows
 * half-loaded lists or moves the keyboard focus. /portal/unsubscribe is the unsubscribe page of partner emails, which
 * needs no sign-in (./unsubscribe.tsx).
 */
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, errorMessage, whenSignedOut } from "../lib/api";
import { language, setLanguage, t } from "../lib/i18n";
import { Alert, StatusLine } from "../lib/ui";
import { ProfileView } from "./profile";
import { loadLists, NotApproved, ProgramView, type ProgramLists } from "./program";
import { CheckEmail, SignInForm, signInFromLink } from "./sign-in";
import { stripeReturnOf, type StripeReturn } from "./stripe-account";
import type { PortalMe, PortalProgram, Profile } from "./types";
import { Unsubscribe } from "./unsubscribe";

const REFRESH_MS = 30_000;

// Before the first render: the browser's language until the partner's setting is known (docs/partners.md, "Languages").
setLanguage(null);

/** What the portal shows: one consistent snapshot of the partner and the chosen program's lists. */
interface Snapshot {
  me: PortalMe;
  program: PortalProgram | undefined;
  lists: ProgramLists | null;
  updated: Date;
}

/** The part of the signed-in portal shown: the programs, or the profile (/portal#profile; Stripe's way back is to it). */
type Part = "programs" | "profile";
const partOfAddress = (): Part => (location.hash === "#profile" || stripeReturnOf(location.search) ? "profile" : "programs");

type View = { kind: "loading" } | { kind: "sign-in"; focus?: "heading" | "email" } | { kind: "check-email"; email: string } | { kind: "portal"; snapshot: Snapshot };

/** The program to show: the one asked for while the partner is still enrolled there, else the first approved one. */
function choose(me: PortalMe, wanted: number | null): PortalProgram | undefined {
  return me.programs.find((p) => p.programId === wanted) ?? me.programs.find((p) => p.status === "approved") ?? me.programs[0];
}

async function loadSnapshot(wanted: number | null): Promise<Snapshot> {
  const me = await api<PortalMe>("GET", "/api/partner/me");
  const program = choose(me, wanted);
  const lists = program?.status === "approved" ? await loadLists(program.programId) : null;
  return { me, program, lists, updated: new Date() };
}

function App() {
  const [view, setView] = useState<View>({ kind: "loading" });
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  const [email, setEmail] = useState("");
  const [picked, setPicked] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const [part, setPart] = useState<Part>(partOfAddress);
  const [stripeReturn, setStripeReturn] = useState<StripeReturn>(() => stripeReturnOf(location.search));
  // The language shown: re-rendering with a new one redraws every text. The partner's setting is read once signed in.
  const [, setShownLanguage] = useState<string>(() => setLanguage(null));
  const languageRead = useRef(false);
  const applyLanguage = (setting: Profile["locale"]) => setShownLanguage(setLanguage(setting));
  // Only the newest load may change the view (a slow refresh must not undo a program picked after it started).
  const round = useRef(0);
  const shown = useRef<View["kind"]>("loading");
  shown.current = view.kind;
  const latest = useRef<number | null>(null);
  latest.current = picked;

  const fail = (e: unknown) => {
    // A 401 already took the page back to the sign-in form (whenSignedOut).
    if (e instanceof ApiError && e.status === 401) return;
    setError(errorMessage(e));
  };

  const load = async (wanted: number | null) => {
    const mine = ++round.current;
    setBusy(true);
    try {
      const snapshot = await loadSnapshot(wanted);
      if (mine !== round.current) return;
      if (!languageRead.current) {
        // The partner's language, once per sign-in (the profile changes it afterwards).
        const profile = await api<Profile>("GET", "/api/partner/profile");
        languageRead.current = true;
        if (mine !== round.current) return;
        applyLanguage(profile.locale);
      }
      setPicked(snapshot.program?.programId ?? null);
      setView((v) => (v.kind === "portal" || v.kind === "loading" ? { kind: "portal", snapshot } : v));
      setError(null);
    } catch (e) {
      if (mine === round.current) fail(e);
    } finally {
      if (mine === round.current) setBusy(false);
    }
  };

  useEffect(() => {
    whenSignedOut(() => {
      round.current++;
      setBusy(false);
      // The session ended while the portal was open (it expired, or was signed out elsewhere): say so.
      if (shown.current === "portal") setStatus(t("portal.sessionEnded"));
      languageRead.current = false;
      setView({ kind: "sign-in" });
    });
    // The header's links change the address's fragment; the new part's heading then gets the focus.
    const onHash = () => {
      const next = partOfAddress();
      setPart(next);
      setStatus("");
      setStripeReturn(null);
      // Back to the programs: their figures were not refreshed while the profile was shown.
      if (next === "programs" && shown.current === "portal") void load(latest.current);
      requestAnimationFrame(() => document.getElementById(next === "profile" ? "profile-title" : "portal-title")?.focus());
    };
    window.addEventListener("hashchange", onHash);
    // Stripe's way back names the program (?program=ID&stripe=return): it is the one shown.
    const fromStripe = Number(new URLSearchParams(location.search).get("program")) || null;
    // Back from Stripe: the profile says so once; the address becomes the profile's own.
    if (stripeReturnOf(location.search)) history.replaceState(null, "", "/portal#profile");
    void (async () => {
      const linkError = await signInFromLink();
      if (linkError) setError(linkError);
      await load(fromStripe);
    })();
  }, []);

  const signedIn = view.kind === "portal";
  useEffect(() => {
    if (!signedIn || part !== "programs") return;
    // New sales and refunds show up without reloading; paused while the tab is hidden.
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void load(picked);
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [signedIn, picked, part]);

  const signOut = async () => {
    try {
      await api("POST", "/api/partner/auth/sign-out");
    } catch (e) {
      return fail(e);
    }
    round.current++;
    setError(null);
    languageRead.current = false;
    setStatus(t("portal.signedOut"));
    setView({ kind: "sign-in", focus: "heading" });
  };

  const pick = (event: Event) => {
    const programId = Number((event.currentTarget as HTMLSelectElement).value);
    setPicked(programId);
    setStatus("");
    void load(programId);
  };

  const me = view.kind === "portal" ? view.snapshot.me : null;
  return (
    <>
      <header class="top">
        <h1>{t("portal.title")}</h1>
        {me && (
          <nav class="pages portal-nav" aria-label={t("portal.nav")}>
            <a href="#programs" aria-current={part === "programs" ? "page" : undefined}>
              {t("portal.nav.programs")}
            </a>
            <a href="#profile" aria-current={part === "profile" ? "page" : undefined}>
              {t("portal.nav.profile")}
            </a>
          </nav>
        )}
        {me && (
          <div class="account">
            <span class="muted who">{me.partner.email ? `${me.partner.name} (${me.partner.email})` : me.partner.name}</span>
            <button type="button" class="secondary" onClick={() => void signOut()}>
              {t("portal.signOut")}
            </button>
          </div>
        )}
      </header>
      <main>
        <StatusLine text={status} />
        {error && <Alert>{error}</Alert>}
        {view.kind === "loading" && <p class="muted">{t("portal.loading")}</p>}
        {view.kind === "sign-in" && (
          <SignInForm
            email={email}
            focus={view.focus}
            onError={setError}
            onSent={(address) => {
              setEmail(address);
              setStatus("");
              setView({ kind: "check-email", email: address });
            }}
          />
        )}
        {view.kind === "check-email" && <CheckEmail email={view.email} onAnother={() => setView({ kind: "sign-in", focus: "email" })} />}
        {view.kind === "portal" && part === "profile" && (
          <ProfileView
            programs={view.snapshot.me.programs.filter((p) => p.status === "approved")}
            stripeReturn={stripeReturn}
            onSaved={(saved) => {
              applyLanguage(saved.locale);
              void load(picked);
            }}
            onError={fail}
          />
        )}
        {view.kind === "portal" && part === "programs" && (
          <div class="portal" aria-busy={busy}>
            <h2 id="portal-title" class="visually-hidden focus-target" tabIndex={-1}>
              {t("portal.nav.programs")}
            </h2>
            <div class="portal-bar">
              {view.snapshot.me.programs.length > 1 && (
                <div class="picker">
                  <label for="program">{t("portal.program")}</label>
                  <select id="program" value={String(picked ?? "")} onChange={pick}>
                    {view.snapshot.me.programs.map((p) => (
                      <option key={p.programId} value={String(p.programId)}>
                        {p.status === "approved"
                          ? p.name
                          : t("portal.programStatus", { name: p.name, status: t(p.status === "pending" ? "portal.status.pending" : "portal.status.declined") })}
                      </option>
                    ))}
                  </select>
                </div>
              )}
              <p class="refresh">
                <button type="button" class="secondary" onClick={() => void load(picked)}>
                  {t("portal.refresh")}
                </button>{" "}
                <span class="muted">{busy ? t("portal.updating") : t("portal.updated", { time: view.snapshot.updated.toLocaleTimeString(language()) })}</span>
              </p>
            </div>
            {view.snapshot.program && view.snapshot.lists ? (
              <ProgramView program={view.snapshot.program} lists={view.snapshot.lists} onError={fail} onStatus={setStatus} />
            ) : (
              <NotApproved program={view.snapshot.program} />
            )}
          </div>
        )}
      </main>
    </>
  );
}

render(location.pathname === "/portal/unsubscribe" ? <Unsubscribe /> : <App />, document.getElementById("app") as HTMLElement);
