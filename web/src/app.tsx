import { useEffect, useState } from "preact/hooks";
import { onSignedOut } from "./api";
import { StoreBanner } from "./components/store-banner";
import { live, useLiveStatus } from "./live";
import { ChatPage } from "./pages/chat";
import { OverviewPage } from "./pages/overview";
import { SearchPage } from "./pages/search";
import { SessionPage } from "./pages/session";
import { SessionsPage } from "./pages/sessions";
import { SignInPage } from "./pages/signin";
import { followLink, navigate, useLocation } from "./router";
import { applyTheme, nextTheme, readTheme, type Theme } from "./theme";
import { clearToken, readToken } from "./token";

const NAV = [
  { href: "/sessions", label: "Sessions" },
  { href: "/search", label: "Search" },
  { href: "/chat", label: "Chat" },
  { href: "/overview", label: "Overview" },
];

export function App() {
  const { path, query } = useLocation();
  const [signedIn, setSignedIn] = useState(() => readToken() !== undefined);

  useEffect(
    () =>
      onSignedOut(() => {
        live.disconnect();
        setSignedIn(false);
      }),
    [],
  );
  useEffect(() => {
    if (signedIn) live.connect();
  }, [signedIn]);
  const home = path === "/" || path === "/signin";
  useEffect(() => {
    if (signedIn && home) navigate("/sessions", true);
  }, [signedIn, home]);

  if (!signedIn) {
    return <SignInPage refused={query.get("refused") === "1"} onSignedIn={() => setSignedIn(true)} />;
  }
  if (home) return null;
  const signOut = () => {
    clearToken();
    live.disconnect();
    setSignedIn(false);
  };
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: delegates link clicks; keys activate the links themselves
    // biome-ignore lint/a11y/noStaticElementInteractions: same delegation as above
    <div class="shell" onClick={(event) => followLink(event)}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="/sessions">
          sessiond
        </a>
        <nav aria-label="Main">
          {NAV.map((item) => (
            <a
              key={item.href}
              href={item.href}
              aria-current={path.startsWith(item.href) ? "page" : undefined}
            >
              {item.label}
            </a>
          ))}
        </nav>
        <div class="topbar-end">
          <LiveBadge />
          <ThemeToggle />
          <button type="button" class="ghost" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <StoreBanner />
      <main id="main" tabIndex={-1}>
        <Page path={path} query={query} />
      </main>
    </div>
  );
}

function Page({ path, query }: { path: string; query: URLSearchParams }) {
  if (path.startsWith("/sessions/")) {
    let key: string;
    try {
      key = decodeURIComponent(path.slice("/sessions/".length));
    } catch {
      return <p role="alert">That address names no session.</p>;
    }
    return <SessionPage key={key} sessionKey={key} entry={query.get("entry") ?? undefined} />;
  }
  if (path === "/sessions") return <SessionsPage query={query} />;
  if (path === "/search") return <SearchPage query={query} />;
  if (path === "/chat") return <ChatPage query={query} />;
  if (path === "/overview") return <OverviewPage />;
  return (
    <section class="page">
      <h1>Not found</h1>
      <p>
        Nothing lives at <code>{path}</code>. <a href="/sessions">Back to the sessions</a>.
      </p>
    </section>
  );
}

function LiveBadge() {
  const status = useLiveStatus();
  const label = status === "open" ? "Live" : status === "connecting" ? "Connecting" : "Offline";
  return (
    <span class={`live live-${status}`} role="status" title={`Live updates: ${label.toLowerCase()}`}>
      {label}
    </span>
  );
}

function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(readTheme);
  const next = nextTheme(theme);
  return (
    <button
      type="button"
      class="ghost"
      aria-label={`Theme: ${theme}. Switch to ${next}`}
      onClick={() => {
        applyTheme(next);
        setTheme(next);
      }}
    >
      {theme === "system" ? "Auto" : theme === "light" ? "Light" : "Dark"}
    </button>
  );
}
