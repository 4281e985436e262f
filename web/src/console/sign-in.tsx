/** The console's sign-in form (POST /api/auth/login sets the session cookie). */
import { useState } from "preact/hooks";
import { api, errorMessage } from "../lib/api";
import { Alert, Field } from "../lib/ui";

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    try {
      await api("POST", "/api/auth/login", { email: form.get("email"), password: form.get("password") });
      setError(null);
      onSignedIn();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main>
      <form class="card narrow" aria-labelledby="login-title" onSubmit={submit}>
        <h1 id="login-title">Sign in</h1>
        <Field label="Email" name="email" type="email" autocomplete="username" required />
        <Field label="Password" name="password" type="password" autocomplete="current-password" required />
        <p>
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </p>
        {error && <Alert>{error}</Alert>}
      </form>
    </main>
  );
}
