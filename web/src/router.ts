import { useEffect, useState } from "preact/hooks";

const CHANGE = "sessiond:navigate";

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  window.dispatchEvent(new Event(CHANGE));
}

/** The current path and query; re-renders on navigation and on back/forward. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const read = () => ({ path: location.pathname, query: new URLSearchParams(location.search) });
  const [current, setCurrent] = useState(read);
  useEffect(() => {
    const update = () => setCurrent(read());
    window.addEventListener("popstate", update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return current;
}

/** A click on an in-app link navigates without a reload; modified clicks (new tab…) stay the browser's. */
export function followLink(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = (event.target as Element | null)?.closest("a");
  if (!anchor || anchor.target || anchor.origin !== location.origin || anchor.hasAttribute("download"))
    return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}

export function sessionHref(key: string): string {
  return `/sessions/${encodeURIComponent(key)}`;
}

/** A session opened at one entry (a generation's id and a seq), highlighted and scrolled into view. */
export function entryHref(key: string, sessionId: string, seq: number): string {
  return `${sessionHref(key)}?${new URLSearchParams({ entry: `${sessionId}:${seq}` })}`;
}
