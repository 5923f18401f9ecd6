import { useEffect, useRef, useState } from "preact/hooks";
import { getJson } from "../api";
import { AgentSelect } from "../components/agent-select";
import { absoluteTime, relativeTime } from "../format";
import { useAgents, useDebounced, useNow } from "../hooks";
import { entryHref } from "../router";
import type { SearchHit, SearchResult } from "../types";

const TYPING_MS = 200;

interface Filters {
  agent: string;
  channel: string;
  role: string;
  archived: string;
}

function apiQuery(text: string, filters: Filters, cursor?: string): string {
  const params = new URLSearchParams({ q: text, limit: "20" });
  for (const [name, value] of Object.entries(filters)) if (value) params.set(name, value);
  if (cursor) params.set("cursor", cursor);
  return `/api/search?${params}`;
}

const ENTITIES: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#39;": "'",
};

/**
 * A snippet as text runs, marked or not. The API sends escaped HTML whose only tags are `<mark>`; it is
 * taken apart here and drawn as text, so nothing else in it can ever become markup.
 */
export function snippetRuns(snippet: string): Array<{ text: string; mark: boolean }> {
  const plain = (s: string) => s.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e);
  return snippet.split(/(<mark>[\s\S]*?<\/mark>)/).flatMap((part) => {
    if (part === "") return [];
    const marked = part.startsWith("<mark>") && part.endsWith("</mark>");
    return [{ text: plain(marked ? part.slice(6, -7) : part), mark: marked }];
  });
}

/** Search what was said: results as you type, filters, each hit opening its session at that entry. */
export function SearchPage({ query }: { query: URLSearchParams }) {
  const [text, setText] = useState(query.get("q") ?? "");
  const [filters, setFilters] = useState<Filters>({ agent: "", channel: "", role: "", archived: "" });
  const [result, setResult] = useState<SearchResult>();
  const [error, setError] = useState("");
  const settled = useDebounced(text.trim(), TYPING_MS);
  const agents = useAgents();
  const now = useNow();
  // Only the newest request's answer is shown: one typed before it may come back after it.
  const latest = useRef(0);

  const run = async (cursor?: string) => {
    const ticket = ++latest.current;
    try {
      const answer = await getJson<SearchResult>(apiQuery(settled, filters, cursor));
      if (ticket !== latest.current) return;
      setResult((before) =>
        cursor && before ? { ...answer, hits: [...before.hits, ...answer.hits] } : answer,
      );
      setError("");
    } catch (caught) {
      if (ticket === latest.current) setError((caught as Error).message);
    }
  };

  useEffect(() => {
    history.replaceState(null, "", settled ? `/search?${new URLSearchParams({ q: settled })}` : "/search");
    if (settled === "") {
      latest.current++;
      setResult(undefined);
      setError("");
      return;
    }
    void run();
  }, [settled, filters]);

  const setFilter = (name: keyof Filters, value: string) => setFilters((f) => ({ ...f, [name]: value }));
  return (
    <section class="page" aria-labelledby="search-title">
      <h1 id="search-title">Search</h1>
      <form class="filters" onSubmit={(event) => event.preventDefault()} aria-label="Search messages">
        <div class="field grow">
          <label for="s-q">Words to find</label>
          <input
            id="s-q"
            type="search"
            value={text}
            placeholder='invoice, "meeting notes"…'
            onInput={(event) => setText(event.currentTarget.value)}
          />
        </div>
        <AgentSelect
          id="s-agent"
          agents={agents}
          value={filters.agent}
          emptyLabel="All agents"
          onChange={(agent) => setFilter("agent", agent)}
        />
        <div class="field">
          <label for="s-channel">Channel</label>
          <input
            id="s-channel"
            value={filters.channel}
            placeholder="telegram"
            onChange={(e) => setFilter("channel", e.currentTarget.value.trim())}
          />
        </div>
        <div class="field">
          <label for="s-role">Said by</label>
          <select id="s-role" value={filters.role} onChange={(e) => setFilter("role", e.currentTarget.value)}>
            <option value="">Anyone</option>
            <option value="user">User</option>
            <option value="assistant">Assistant</option>
          </select>
        </div>
        <div class="field">
          <label for="s-archived">Generations</label>
          <select
            id="s-archived"
            value={filters.archived}
            onChange={(e) => setFilter("archived", e.currentTarget.value)}
          >
            <option value="">Current and archived</option>
            <option value="exclude">Current only</option>
            <option value="only">Archived only</option>
          </select>
        </div>
      </form>
      {error && <p role="alert">{error}</p>}
      {result?.indexing && (
        <p class="muted">The index is still being built: older messages may be missing.</p>
      )}
      {result && result.complete === false && (
        <p class="muted">The search took too long and stopped early: more words or a filter find the rest.</p>
      )}
      {result && result.hits.length === 0 && <p class="muted empty">Nothing found.</p>}
      {result && result.hits.length > 0 && (
        <ol class="search-hits" aria-label="Results">
          {result.hits.map((hit) => (
            <Hit key={`${hit.sessionId}:${hit.seq}`} hit={hit} now={now} />
          ))}
        </ol>
      )}
      {result?.nextCursor && (
        <button type="button" onClick={() => void run(result.nextCursor)}>
          More results
        </button>
      )}
    </section>
  );
}

function Hit({ hit, now }: { hit: SearchHit; now: number }) {
  return (
    <li class="search-hit" data-key={hit.key} data-seq={hit.seq}>
      <a href={entryHref(hit.key, hit.sessionId, hit.seq)}>
        <span class="key">{hit.key}</span>
        <span class="muted">
          {" "}
          #{hit.seq} · {hit.role}
          {hit.archived ? ` · archived generation ${hit.generation}` : ""} ·{" "}
          <time dateTime={new Date(hit.ts).toISOString()} title={absoluteTime(hit.ts)}>
            {relativeTime(hit.ts, now)}
          </time>
        </span>
      </a>
      <p class="snippet">
        {snippetRuns(hit.snippet).map((run, i) => (run.mark ? <mark key={i}>{run.text}</mark> : run.text))}
      </p>
    </li>
  );
}
