import { useState } from "preact/hooks";
import { ApiError, request } from "../api";
import { saveToken } from "../token";

/** Checks the token against the gateway before keeping it (in this tab's sessionStorage only). */
export function SignInPage({ onSignedIn, refused }: { onSignedIn: () => void; refused: boolean }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState(refused ? "The gateway refused the token. Sign in again." : "");
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const value = token.trim();
    if (!value) {
      setError("Enter the access token.");
      return;
    }
    setBusy(true);
    setError("");
    try {
      await request("/api/agents", {}, value);
      saveToken(value);
      onSignedIn();
    } catch (caught) {
      setError(
        caught instanceof ApiError && caught.status === 401
          ? "That token was refused."
          : `Cannot reach the gateway: ${(caught as Error).message}`,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="signin" id="main">
      <form class="card signin-card" onSubmit={submit} aria-describedby="signin-help">
        <h1>sessiond</h1>
        <p id="signin-help" class="muted">
          Sign in with the gateway's access token (<code>SESSIOND_TOKEN</code>, or the{" "}
          <code>gateway-token</code> file in the data dir). It is kept for this tab only.
        </p>
        <label for="token">Access token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="current-password"
          value={token}
          onInput={(event) => setToken(event.currentTarget.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? "signin-error" : undefined}
        />
        <p id="signin-error" class="error" role="alert">
          {error}
        </p>
        <button type="submit" disabled={busy}>
          {busy ? "Checking…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
