/**
 * The invitation page (/dashboard/invitation#token=..., the link of an invitation mail; docs/merchants.md, "Team
 * (API)"): works signed out. Accepting posts the token (from the URL fragment, which browsers never send to a server)
 * to POST /api/auth/invitations/accept: a new email sends a name and a password to create its account, an email with
 * an account sends the token alone. The API says which when it is the other (400, with what to do), and 410 when the
 * link is used, withdrawn, replaced or expired. Accepting never signs in: the page then leads to the sign-in form.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, errorMessage } from "../../lib/api";
import { Alert, Field } from "../../lib/ui";

interface Accepted {
  workspaceId: number;
  role: string;
  user: { id: number; email: string; name: string | null };
  accountCreated: boolean;
  alreadyMember: boolean;
}

const tokenOf = (hash: string): string | null => new URLSearchParams(hash.replace(/^#/, "")).get("token");

export function Invitation() {
  const [token] = useState(() => tokenOf(location.hash));
  const [error, setError] = useState<{ message: string; gone: boolean } | null>(null);
  const [accepted, setAccepted] = useState<Accepted | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    document.title = "Your invitation · Affiliate console";
  }, []);
  useEffect(() => {
    if (accepted) heading.current?.focus();
  }, [accepted]);

  const accept = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const name = String(form.get("name") ?? "").trim();
    const password = String(form.get("password") ?? "");
    setBusy(true);
    setError(null);
    try {
      // Empty fields are left out: the token alone is an existing account's acceptance.
      const body = { token, name: name || undefined, password: password || undefined };
      setAccepted(await api<Accepted>("POST", "/api/auth/invitations/accept", body));
      // The token is spent: keep it out of the address bar and the history.
      history.replaceState(null, "", location.pathname);
    } catch (e) {
      setError({ message: errorMessage(e), gone: e instanceof ApiError && e.code === "invitation_invalid" });
    } finally {
      setBusy(false);
    }
  };

  if (accepted) {
    return (
      <main>
        <section class="narrow">
          <h1 ref={heading} tabIndex={-1}>
            {accepted.alreadyMember ? "You are a member already" : "You joined the workspace"}
          </h1>
          <p role="status">
            {accepted.alreadyMember
              ? `${accepted.user.email} was a member of the workspace already; the role stays ${accepted.role}.`
              : `${accepted.user.email} is now a member of the workspace, as ${accepted.role}.`}{" "}
            {accepted.accountCreated ? "Your account was created: sign in with this email and the password you chose." : "Sign in with your email and your password."}
          </p>
          <p>
            <a class="button" href="/dashboard">
              Sign in to the console
            </a>
          </p>
        </section>
      </main>
    );
  }

  return (
    <main>
      <form class="card narrow" aria-labelledby="invitation-title" onSubmit={accept}>
        <h1 id="invitation-title">Your invitation</h1>
        {!token ? (
          <Alert>This page needs the whole link from your invitation mail (it ends with #token=…). Open the link from the mail again.</Alert>
        ) : (
          <>
            <p>
              You were invited to a workspace of the affiliate console. Accepting adds your email to the workspace with the role the invitation gives you; you then sign in to the console
              with your email and password. The link works once.
            </p>
            <fieldset>
              <legend>New to the console?</legend>
              <p class="hint muted" id="new-account-hint">
                Choose your name and a password (at least 12 characters) to create your account. If you already have an account with the invited email, leave both empty: your password stays
                as it is.
              </p>
              <Field label="Name" name="name" autocomplete="name" maxLength={200} aria-describedby="new-account-hint" />
              <Field label="Password" name="password" type="password" autocomplete="new-password" minLength={12} maxLength={1024} />
            </fieldset>
            <p>
              <button type="submit" disabled={busy}>
                Accept invitation
              </button>
            </p>
          </>
        )}
        {error && <Alert>{error.message}</Alert>}
        {error?.gone && (
          <p>
            <a href="/dashboard">Sign in to the console</a>
          </p>
        )}
      </form>
    </main>
  );
}
