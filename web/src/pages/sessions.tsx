import { useEffect, useRef, useState } from "preact/hooks";
import { getJson } from "../api";
import { AgentName } from "../components/agent-name";
import { AgentSelect } from "../components/agent-select";
import { StateBadge } from "../components/state-badge";
import { absoluteTime, count, relativeTime } from "../format";
import { useAgents, useDebounced, useNow } from "../hooks";
import { live } from "../live";
import { navigate, sessionHref } from "../router";
import type { Session, SessionChange, SessionPage } from "../types";

const ACTIVITY = [
  { value: "", label: "Any time" },
  { value: "15", label: "Last 15 minutes" },
  { value: "60", label: "Last hour" },
  { value: "1440", label: "Last 24 hours" },
  { value: "10080", label: "Last 7 days" },
];
const PAGE_SIZES = ["25", "50", "100"];

interface Filters {
  agent: string;
  channel: string;
  active: string;
  q: string;
  sort: string;
  limit: number;
}

function filtersOf(query: URLSearchParams): Filters {
  const limit = Number(query.get("limit"));
  return {
    agent: query.get("agent") ?? "",
    channel: query.get("channel") ?? "",
    active: query.get("active") ?? "",
    q: query.get("q") ?? "",
    sort: query.get("sort") === "created" ? "created" : "activity",
    limit: PAGE_SIZES.includes(String(limit)) ? limit : 25,
  };
}

function apiQuery(filters: Filters, cursor: string | undefined): string {
  const params = new URLSearchParams({ sort: filters.sort, limit: String(filters.limit) });
  if (filters.agent) params.set("agent", filters.agent);
  if (filters.channel) params.set("channel", filters.channel);
  if (filters.active) params.set("active", filters.active);
  if (filters.q) params.set("q", filters.q);
  if (cursor) params.set("cursor", cursor);
  return `/api/sessions?${params}`;
}

/** Whether a session that changed live belongs on the first page these filters show. */
function fits(filters: Filters, session: Session, now: number): boolean {
  if (session.state !== "active") return false;
  if (filters.agent && session.agent !== filters.agent) return false;
  if (filters.channel && session.channel !== filters.channel) return false;
  if (filters.active && session.lastActivityAt < now - Number(filters.active) * 60_000) return false;
  const q = filters.q.toLowerCase();
  // The gateway's text filter never finds an incognito session (routes/sessions.ts).
  if (q && session.incognito) return false;
  return !q || session.key.toLowerCase().includes(q) || session.title.toLowerCase().includes(q);
}

interface Row extends Session {
  deleted?: boolean;
}

export function SessionsPage({ query }: { query: URLSearchParams }) {
  const filters = filtersOf(query);
  const agents = useAgents();
  const now = useNow();
  const [text, setText] = useState(filters.q);
  const settledText = useDebounced(text, 250);
  const filterKey = apiQuery(filters, undefined);
  // cursors[i] is the cursor of page i; page 0 has none. New filters start again at the first page.
  const [paging, setPaging] = useState<{ filterKey: string; cursors: Array<string | undefined> }>({
    filterKey,
    cursors: [undefined],
  });
  const cursors = paging.filterKey === filterKey ? paging.cursors : [undefined];
  const setCursors = (next: Array<string | undefined>) => setPaging({ filterKey, cursors: next });
  const [page, setPage] = useState<SessionPage>();
  const [rows, setRows] = useState<Row[]>([]);
  const [error, setError] = useState("");
  const [loading, setLoading] = useState(true);
  const [running, setRunning] = useState<ReadonlySet<string>>(new Set());
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  const pageIndex = cursors.length - 1;
  const cursor = cursors[pageIndex];
  const latest = useRef({ filters, pageIndex });
  latest.current = { filters, pageIndex };

  const setFilter = (name: keyof Filters, value: string) => {
    const params = new URLSearchParams(location.search);
    if (value) params.set(name, value);
    else params.delete(name);
    navigate(`/sessions${params.size > 0 ? `?${params}` : ""}`, true);
  };

  useEffect(() => {
    if (settledText !== filters.q) setFilter("q", settledText.trim());
  }, [settledText]);

  useEffect(() => {
    let cancelled = false;
    setLoading(true);
    getJson<SessionPage>(apiQuery(filters, cursor)).then(
      (result) => {
        if (cancelled) return;
        setPage(result);
        setRows(result.sessions);
        setError("");
        setLoading(false);
      },
      (caught: Error) => {
        if (cancelled) return;
        setError(caught.message);
        setLoading(false);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [filterKey, cursor]);

  useEffect(() => {
    const stopOpen = live.onOpen(() => {
      live.call("sessions.watch").catch(() => {});
    });
    const stopEvents = live.on("sessions.changed", (data) => {
      const change = data as SessionChange;
      if (change.type === "turn.started" || change.type === "turn.finished") {
        setRunning((current) => {
          const next = new Set(current);
          if (change.type === "turn.started") next.add(change.key);
          else next.delete(change.key);
          return next;
        });
        return;
      }
      const { filters: f, pageIndex: index } = latest.current;
      setRows((current) => {
        const at = current.findIndex((row) => row.key === change.key);
        if (change.type === "deleted") {
          return at === -1 ? current : current.map((row, i) => (i === at ? { ...row, deleted: true } : row));
        }
        const session = change.session;
        if (!session) return current;
        if (at !== -1) {
          const updated = current.slice();
          updated[at] = session;
          // Sorted by activity, the first page shows the session that just moved where it now belongs.
          if (index === 0 && f.sort === "activity" && at > 0) updated.unshift(...updated.splice(at, 1));
          return updated;
        }
        if (index !== 0 || !fits(f, session, Date.now())) return current;
        const newest = current[0];
        if (f.sort === "created" && newest && session.createdAt < newest.createdAt) return current;
        setFresh((old) => new Set(old).add(session.key));
        // The page keeps its size: the newest arrives on top, the oldest row moves to the next page.
        return [session, ...current].slice(0, f.limit);
      });
    });
    return () => {
      stopOpen();
      stopEvents();
      live.call("sessions.unwatch").catch(() => {});
    };
  }, []);

  const older = page?.nextCursor;
  return (
    <section class="page" aria-labelledby="sessions-title">
      <h1 id="sessions-title">Sessions</h1>
      <form class="filters" onSubmit={(event) => event.preventDefault()} aria-label="Filter sessions">
        <div class="field grow">
          <label for="f-q">Search key or title</label>
          <input
            id="f-q"
            type="search"
            value={text}
            placeholder="telegram:42, invoice…"
            onInput={(event) => setText(event.currentTarget.value)}
          />
        </div>
        <AgentSelect
          id="f-agent"
          agents={agents}
          value={filters.agent}
          emptyLabel="All agents"
          onChange={(agent) => setFilter("agent", agent)}
        />
        <div class="field">
          <label for="f-channel">Channel</label>
          <input
            id="f-channel"
            value={filters.channel}
            placeholder="any"
            onChange={(event) => setFilter("channel", event.currentTarget.value.trim())}
          />
        </div>
        <div class="field">
          <label for="f-active">Activity</label>
          <select
            id="f-active"
            value={filters.active}
            onChange={(e) => setFilter("active", e.currentTarget.value)}
          >
            {ACTIVITY.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-sort">Sort by</label>
          <select id="f-sort" value={filters.sort} onChange={(e) => setFilter("sort", e.currentTarget.value)}>
            <option value="activity">Last activity</option>
            <option value="created">Newest created</option>
          </select>
        </div>
      </form>
      <p class="status-line" aria-live="polite">
        {error ? (
          <span class="error">{error}</span>
        ) : loading ? (
          "Loading…"
        ) : page?.partial ? (
          `Searched ${count(page.scanned ?? 0)} sessions, ${rows.length} found; “Older” searches further.`
        ) : rows.length === 0 ? (
          "No sessions match."
        ) : (
          `Page ${pageIndex + 1} · ${rows.length} sessions`
        )}
      </p>
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={pageIndex === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          ← Newer
        </button>
        <span class="muted">Page {pageIndex + 1}</span>
        <button type="button" disabled={!older} onClick={() => older && setCursors([...cursors, older])}>
          Older →
        </button>
        <label class="page-size">
          <span>Per page</span>
          <select value={String(filters.limit)} onChange={(e) => setFilter("limit", e.currentTarget.value)}>
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </label>
      </nav>
      <div class="table-wrap">
        <table class="sessions" aria-busy={loading}>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Title</th>
              <th scope="col">Agent</th>
              <th scope="col">Channel</th>
              <th scope="col" class="num">
                Messages
              </th>
              <th scope="col" class="num">
                Tokens
              </th>
              <th scope="col">Last activity</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr
                key={row.key}
                class={`${fresh.has(row.key) ? "fresh" : ""}${row.deleted ? " deleted" : ""}`}
                data-key={row.key}
              >
                <td class="c-key">
                  <a href={sessionHref(row.key)} title={row.key}>
                    {row.key}
                  </a>
                </td>
                <td class="c-title" title={row.title}>
                  {row.title || <span class="muted">untitled</span>}
                </td>
                <td class="c-agent">
                  <AgentName agent={row.agent} agents={agents} />
                </td>
                <td class="c-channel">{row.channel}</td>
                <td class="c-messages num">{count(row.messageCount)}</td>
                <td class="c-tokens num">{count(row.approxTokens)}</td>
                <td class="c-activity">
                  <time
                    dateTime={new Date(row.lastActivityAt).toISOString()}
                    title={absoluteTime(row.lastActivityAt)}
                  >
                    {relativeTime(row.lastActivityAt, now)}
                  </time>
                </td>
                <td class="c-state">
                  <StateBadge
                    state={row.deleted ? "deleted" : running.has(row.key) ? "running" : row.state}
                    needsAttention={row.needsAttention === true}
                    incognito={row.incognito === true}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
