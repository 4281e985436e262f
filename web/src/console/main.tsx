/**
 * The merchant console (docs/merchants.md, "The console"): one page for every screen under /dashboard, routed in
 * the browser. Before anything else it asks who is signed in; without a session it shows the sign-in form (the
 * invitation page excepted: it works signed out).
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { LocationProvider, useLocation } from "preact-iso";
import { api, errorMessage, whenSignedOut } from "../lib/api";
import { Alert } from "../lib/ui";
import { Shell } from "./shell";
import { SignIn } from "./sign-in";
import type { Me } from "./session";
import { Invitation } from "./screens/invitation";

function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    api<Me>("GET", "/api/auth/me").then(
      (who) => setMe(who),
      (e) => (e.status === 401 ? setMe(null) : setError(errorMessage(e))),
    );
  useEffect(() => {
    whenSignedOut(() => setMe(null));
    void load();
  }, []);
  const { path } = useLocation();
  if (path === "/dashboard/invitation") return <Invitation />;
  if (error) return <Alert>{error}</Alert>;
  if (me === undefined) return <p class="muted">Loading…</p>;
  if (me === null) return <SignIn onSignedIn={load} />;
  return <Shell me={me} onSignedOut={() => setMe(null)} />;
}

render(
  <LocationProvider>
    <App />
  </LocationProvider>,
  document.getElementById("app") as HTMLElement,
);
