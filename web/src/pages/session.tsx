import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError, deleteJson, getJson, postJson, request, sessionPath } from "../api";
import { BranchesPanel, EntryBranchActions, Lineage, runtimeSessionsNote } from "../components/branches";
import { Confirm } from "../components/confirm";
import { Details } from "../components/details";
import { ShareLinks } from "../components/share-links";
import { StateBadge } from "../components/state-badge";
import { Transcript } from "../components/transcript";
import { live } from "../live";
import { navigate, sessionHref } from "../router";
import type { Entry, ForkAnswer, RuntimeSessionsAnswer, Session, SessionDetail } from "../types";

const PAGE = 200;
/** A search hit further back than this many pages is not brought into view (the pages stay loaded). */
const MAX_PAGES_TO_HIT = 50;
const FORMATS = [
  { value: "json", label: "JSON" },
  { value: "jsonl", label: "JSONL (CrabTalk)" },
  { value: "md", label: "Markdown" },
];

interface Loaded {
  detail: SessionDetail;
  entries: Entry[];
  /** More entries before the first one shown (in its generation, or in earlier ones). */
  more: boolean;
}

/**
 * One page of the transcript, oldest first: the newest PAGE entries before `first` (the first one shown),
 * across generations when `all`. The DOM holds only the pages asked for, as a long transcript does.
 */
async function fetchPage(
  sessionKey: string,
  all: boolean,
  first?: Entry,
): Promise<{ entries: Entry[]; more: boolean }> {
  const params = new URLSearchParams({ limit: String(PAGE) });
  if (first) params.set("before", String(first.seq));
  if (all) {
    params.set("all", "true");
    if (first) params.set("before_session", first.sessionId);
  }
  const { entries } = await getJson<{ entries: Entry[] }>(sessionPath(sessionKey, `/history?${params}`));
  const head = entries[0];
  // Across generations a full page says there may be more; in one generation, a first seq above 1 does.
  const more = head !== undefined && (all ? entries.length >= PAGE : head.seq > 1);
  return { entries, more };
}

const entryName = (entry: Entry) => `${entry.sessionId}:${entry.seq}`;

/** `entry` (`sessionId:seq`, from a search hit): that entry is highlighted and scrolled into view. */
export function SessionPage({ sessionKey, entry }: { sessionKey: string; entry?: string | undefined }) {
  const [loaded, setLoaded] = useState<Loaded>();
  const [error, setError] = useState("");
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  // A hit may be in an archived generation or far back: those are loaded too.
  const [allGenerations, setAllGenerations] = useState(entry !== undefined);
  // An entry asked for on the page already open (a branch's link): it may be in an archived generation.
  useEffect(() => {
    if (entry !== undefined) setAllGenerations(true);
  }, [entry]);
  const [confirmDelete, setConfirmDelete] = useState(false);
  /** The entry a rewind was asked for, while its confirmation is open. */
  const [rewindAt, setRewindAt] = useState<number>();
  const [format, setFormat] = useState("json");
  const [running, setRunning] = useState(false);

  const load = useCallback(async () => {
    try {
      const detail = await getJson<SessionDetail>(sessionPath(sessionKey));
      let page = await fetchPage(sessionKey, allGenerations);
      let entries = page.entries;
      // A search hit further back: earlier pages until it is in (bounded).
      for (let pages = 1; entry && page.more && pages < MAX_PAGES_TO_HIT; pages++) {
        if (entries.some((e) => entryName(e) === entry)) break;
        page = await fetchPage(sessionKey, allGenerations, entries[0]);
        entries = [...page.entries, ...entries];
      }
      setLoaded({ detail, entries, more: page.more });
      setError("");
    } catch (caught) {
      setError(
        caught instanceof ApiError && caught.code === "SESSION_NOT_FOUND"
          ? "There is no session with this key (it may have been deleted)."
          : (caught as Error).message,
      );
    }
  }, [sessionKey, allGenerations, entry]);

  useEffect(() => {
    void load();
  }, [load]);

  const shown = loaded !== undefined;
  useEffect(() => {
    if (!shown || !entry) return;
    const target = [...document.querySelectorAll<HTMLElement>("[data-entry]")].find(
      (el) => el.dataset.entry === entry,
    );
    target?.scrollIntoView({ block: "center" });
  }, [shown, entry]);

  useEffect(() => {
    const stopOpen = live.onOpen(() => {
      live.call("sessions.subscribe", { session: sessionKey }).catch(() => {});
    });
    const stopAppended = live.on("session.appended", (data) => {
      const event = data as { key: string; session: Session; entries: Entry[] };
      if (event.key !== sessionKey) return;
      setLoaded((current) => {
        if (!current) return current;
        const known = new Set(current.entries.map((e) => e.id));
        const added = event.entries.filter((e) => !known.has(e.id) && e.sessionId === event.session.id);
        return {
          ...current,
          // The live row is the store's: the gateway's incognito mark stays from the page's read.
          detail: {
            ...current.detail,
            session: current.detail.session.incognito ? { ...event.session, incognito: true } : event.session,
          },
          entries: [...current.entries, ...added],
        };
      });
    });
    const ours = (data: unknown) => (data as { key?: string }).key === sessionKey;
    const reload = (data: unknown) => {
      if (ours(data)) void load();
    };
    const stopReset = live.on("session.reset", reload);
    const stopUpdated = live.on("session.updated", reload);
    const stopStarted = live.on("session.turn.started", (data) => ours(data) && setRunning(true));
    const stopFinished = live.on("session.turn.finished", (data) => ours(data) && setRunning(false));
    return () => {
      for (const stop of [stopOpen, stopAppended, stopReset, stopUpdated, stopStarted, stopFinished]) stop();
      live.call("sessions.unsubscribe", { session: sessionKey }).catch(() => {});
    };
  }, [sessionKey, load]);

  const act = async (label: string, action: () => Promise<string>) => {
    setBusy(true);
    setMessage(`${label}…`);
    try {
      setMessage(await action());
    } catch (caught) {
      setMessage(`${label} failed: ${(caught as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  const compact = () =>
    act("Compacting", async () => {
      await postJson(sessionPath(sessionKey, "/compact"));
      await load();
      return "Compacted: the earlier part is now one summary (expand it to read what it replaced).";
    });
  const reset = () =>
    act("Resetting", async () => {
      const result = await postJson<{ current: Session }>(sessionPath(sessionKey, "/reset"));
      await load();
      return `Reset: generation ${result.current.generation} started; the previous one is archived.`;
    });
  const fork = (seq: number) =>
    act("Forking", async () => {
      const forked = await postJson<ForkAnswer>(sessionPath(sessionKey, "/fork"), { at_seq: seq });
      navigate(sessionHref(forked.key));
      return `Forked ${sessionKey} at #${forked.forked_from.seq}: this is the new session.${runtimeSessionsNote(forked.runtime_sessions)}`;
    });
  const rewind = (toSeq: number) => {
    setRewindAt(undefined);
    // The head the page shows: a conversation that moved on since is refused (SESSION_CHANGED), not rewound.
    const expectHead = loaded?.detail.session.entryCount;
    void act("Rewinding", async () => {
      let runtimes: RuntimeSessionsAnswer | undefined;
      try {
        const answer = await postJson<{ runtime_sessions: RuntimeSessionsAnswer }>(
          sessionPath(sessionKey, "/rewind"),
          { to_seq: toSeq, expect_head: expectHead },
        );
        runtimes = answer.runtime_sessions;
      } catch (caught) {
        if (!(caught instanceof ApiError && caught.code === "SESSION_CHANGED")) throw caught;
        await load();
        return "Not rewound: the conversation moved on since it was shown. It is reloaded; rewind again if you still want to.";
      }
      await load();
      return `Rewound: the conversation continues from before #${toSeq}; what came after is a branch.${runtimeSessionsNote(runtimes)}`;
    });
  };
  const remove = () => {
    setConfirmDelete(false);
    void act("Deleting", async () => {
      await deleteJson(sessionPath(sessionKey));
      navigate("/sessions");
      return "Deleted.";
    });
  };
  const download = () =>
    act("Exporting", async () => {
      const response = await request(
        sessionPath(sessionKey, `/export?format=${format}${allGenerations ? "&all=true" : ""}`),
      );
      const url = URL.createObjectURL(await response.blob());
      const link = document.createElement("a");
      link.href = url;
      link.download = `${sessionKey.replace(/[^A-Za-z0-9._-]+/g, "_")}.${format}`;
      link.click();
      window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
      return `Exported as ${link.download}.`;
    });
  const earlier = async () => {
    const first = loaded?.entries[0];
    if (!loaded || !first) return;
    const { entries, more } = await fetchPage(sessionKey, allGenerations, first);
    setLoaded((current) => current && { ...current, entries: [...entries, ...current.entries], more });
  };

  if (error) {
    return (
      <section class="page">
        <h1 class="break">{sessionKey}</h1>
        <p class="error" role="alert">
          {error}
        </p>
        <a href="/sessions">Back to the sessions</a>
      </section>
    );
  }
  const session = loaded?.detail.session;
  return (
    <section class="page session-page" aria-labelledby="session-title">
      <p class="crumbs">
        <a href="/sessions">Sessions</a> /
      </p>
      <div class="session-head">
        <h1 id="session-title" class="break">
          {session?.title || sessionKey}
        </h1>
        {session && (
          <StateBadge
            state={running ? "running" : session.state}
            needsAttention={loaded?.detail.needsAttention === true}
            incognito={session.incognito === true}
          />
        )}
      </div>
      {session?.title && <p class="muted break">{sessionKey}</p>}
      {session && <Lineage session={session} />}
      <div class="toolbar" role="toolbar" aria-label="Session actions">
        <button type="button" disabled={busy || !session} onClick={compact}>
          Compact
        </button>
        <button type="button" class="caution" disabled={busy || !session} onClick={reset}>
          Reset
        </button>
        <button
          type="button"
          class="danger"
          disabled={busy || !session}
          onClick={() => setConfirmDelete(true)}
        >
          Delete…
        </button>
        <span class="export">
          <label for="export-format" class="sr-only">
            Export format
          </label>
          <select id="export-format" value={format} onChange={(e) => setFormat(e.currentTarget.value)}>
            {FORMATS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
          <button
            type="button"
            disabled={busy || !session || session.incognito === true}
            title={session?.incognito ? "An incognito session is never exported" : undefined}
            onClick={download}
          >
            Export
          </button>
        </span>
      </div>
      <p class="status-line" role="status">
        {message}
      </p>
      {session && !session.incognito && <ShareLinks sessionKey={sessionKey} />}
      <BranchesPanel sessionKey={sessionKey} refresh={session?.id} />
      <div class="session-body">
        <div class="card transcript-card">
          <div class="transcript-head">
            <h2>Transcript</h2>
            <label class="check">
              <input
                type="checkbox"
                checked={allGenerations}
                onChange={(e) => setAllGenerations(e.currentTarget.checked)}
              />
              Earlier generations
            </label>
          </div>
          {loaded?.more && (
            <button type="button" class="ghost" onClick={() => void earlier()}>
              Load earlier entries
            </button>
          )}
          {loaded ? (
            <Transcript
              entries={loaded.entries}
              highlight={entry}
              // Only on the conversation as it is: with earlier generations shown, a seq may be another's.
              actions={
                allGenerations
                  ? undefined
                  : (e) =>
                      e.type === "message" && (
                        <EntryBranchActions entry={e} disabled={busy} onFork={fork} onRewind={setRewindAt} />
                      )
              }
            />
          ) : (
            <p class="muted">Loading…</p>
          )}
        </div>
        {loaded && <Details detail={loaded.detail} onChanged={() => void load()} />}
      </div>
      <Confirm
        open={confirmDelete}
        title="Delete this session?"
        body={`Every generation of ${sessionKey} and all their entries are deleted. This cannot be undone.`}
        confirmLabel="Delete"
        onConfirm={remove}
        onCancel={() => setConfirmDelete(false)}
      />
      <Confirm
        open={rewindAt !== undefined}
        title={`Rewind to before #${rewindAt ?? ""}?`}
        body={`The conversation continues from the entry before #${rewindAt ?? ""}. #${rewindAt ?? ""} and everything after it leave this conversation but are not deleted: they stay readable as a rewound branch.`}
        confirmLabel="Rewind"
        onConfirm={() => rewindAt !== undefined && rewind(rewindAt)}
        onCancel={() => setRewindAt(undefined)}
      />
    </section>
  );
}
