/**
 * The console's frame around every screen: the program picker, who is signed in, the navigation, and the screen the
 * URL names. The chosen program travels in the URL (?program=) and is remembered for the next visit.
 */
import { useEffect } from "preact/hooks";
import { Route, Router, useLocation } from "preact-iso";
import { api, type Page } from "../lib/api";
import { Alert, useAsync } from "../lib/ui";
import { Screen } from "./screen";
import { Console, screenHref, type Me, type ProgramChoice, type ProgramSettings } from "./session";
import { Commissions } from "./screens/commissions";
import { Emails } from "./screens/emails";
import { Overview } from "./screens/overview";
import { PartnerDetail } from "./screens/partner";
import { Partners } from "./screens/partners";
import { Payouts } from "./screens/payouts";
import { Rewards } from "./screens/rewards";
import { Risk } from "./screens/risk";
import { Sales } from "./screens/sales";
import { Settings } from "./screens/settings";

/** The navigation, in order: [path under /dashboard, label]. */
const SCREENS: Array<[string, string]> = [
  ["", "Overview"],
  ["/partners", "Partners"],
  ["/sales", "Sales"],
  ["/commissions", "Commissions"],
  ["/payouts", "Payouts"],
  ["/risk", "Risk"],
  ["/rewards", "Rewards"],
  ["/emails", "Emails"],
  ["/settings", "Settings"],
];

async function loadPrograms(me: Me): Promise<ProgramChoice[]> {
  const lists = await Promise.all(
    me.workspaces.map(async (w) => {
      const page = await api<Page<{ id: number; name: string }>>("GET", `/api/workspaces/${w.workspaceId}/programs?limit=100`);
      return page.data.map((p) => ({ id: p.id, name: p.name, workspaceId: w.workspaceId, role: w.role }));
    }),
  );
  return lists.flat();
}

export function Shell({ me, onSignedOut }: { me: Me; onSignedOut: () => void }) {
  const { path, query, route } = useLocation();
  const programs = useAsync(() => loadPrograms(me), [me]);
  const wanted = Number(query.program ?? localStorage.getItem("programId") ?? NaN);
  const program = programs.data?.find((p) => p.id === wanted) ?? programs.data?.[0];
  const settings = useAsync(() => (program ? api<ProgramSettings>("GET", `/api/programs/${program.id}/settings`) : Promise.resolve(undefined)), [program?.id]);
  useEffect(() => {
    if (program) localStorage.setItem("programId", String(program.id));
  }, [program?.id]);

  const signOut = async () => {
    await api("POST", "/api/auth/logout").catch(() => undefined);
    onSignedOut();
  };
  const pick = (event: Event) => route(`${path}?program=${(event.currentTarget as HTMLSelectElement).value}`);
  // A partner's screen belongs to Partners; a settings tab to Settings, a Risk tab to Risk.
  const section = path === "/dashboard/partner" ? "/dashboard/partners" : path;
  const current = SCREENS.filter(([screen]) => section === `/dashboard${screen}` || (screen && section.startsWith(`/dashboard${screen}/`))).pop()?.[0] ?? "";

  return (
    <>
      <a class="skip" href="#screen">
        Skip to the screen
      </a>
      <header class="top">
        <p class="brand">Affiliate console</p>
        {programs.data && programs.data.length > 0 && (
          <div class="picker">
            <label for="program">Program</label>
            <select id="program" value={program?.id} onChange={pick}>
              {programs.data.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name} (#{p.id})
                </option>
              ))}
            </select>
          </div>
        )}
        <p class="session">
          Signed in as <strong>{me.user.email}</strong>{" "}
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </p>
        {program && (
          <nav aria-label="Console" class="pages">
            {SCREENS.map(([screen, label]) => (
              <a key={screen} href={screenHref(screen, program.id)} aria-current={screen === current ? "page" : undefined}>
                {label}
              </a>
            ))}
          </nav>
        )}
      </header>
      <main id="screen" tabIndex={-1}>
        {programs.error && <Alert>{programs.error}</Alert>}
        {programs.data && programs.data.length === 0 && <p>You are not a member of a workspace with a program yet. Ask an owner to invite you.</p>}
        {settings.error && <Alert>{settings.error}</Alert>}
        {program && settings.data && (
          <Console.Provider value={{ me, program, settings: settings.data, reloadSettings: settings.reload }}>
            <Router>
              <Route path="/dashboard" component={Overview} />
              <Route path="/dashboard/partners" component={Partners} />
              <Route path="/dashboard/partner" component={PartnerDetail} />
              <Route path="/dashboard/sales" component={Sales} />
              <Route path="/dashboard/commissions" component={Commissions} />
              <Route path="/dashboard/payouts" component={Payouts} />
              <Route path="/dashboard/risk/:section?" component={Risk} />
              <Route path="/dashboard/rewards" component={Rewards} />
              <Route path="/dashboard/emails" component={Emails} />
              <Route path="/dashboard/settings/:section?" component={Settings} />
              <Route default component={NotFound} />
            </Router>
          </Console.Provider>
        )}
      </main>
    </>
  );
}

function NotFound() {
  return (
    <Screen title="Not found">
      <p>There is no screen at this address. Pick one in the navigation above.</p>
    </Screen>
  );
}
