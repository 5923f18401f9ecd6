import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, getJson, sessionPath } from "../api";
import { AgentSelect } from "../components/agent-select";
import { LongText } from "../components/long-text";
import { useAgents } from "../hooks";
import { live, useLiveStatus } from "../live";
import { navigate, sessionHref } from "../router";
import type { Entry } from "../types";

const STORED = "sessiond.chat";

interface Bubble {
  id: string;
  role: "user" | "assistant" | "error";
  text: string;
  /** How many streamed pieces the reply arrived in (assistant replies of this page only). */
  deltas?: number;
  streaming?: boolean;
}

function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return `admin-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** A web chat with an agent in an `admin-…` session; the reply streams in over the WebSocket. */
export function ChatPage({ query }: { query: URLSearchParams }) {
  const agents = useAgents();
  const status = useLiveStatus();
  const sessionId = query.get("session") ?? sessionStorage.getItem(STORED) ?? newSessionId();
  const [agent, setAgent] = useState("");
  const [text, setText] = useState("");
  const [bubbles, setBubbles] = useState<Bubble[]>([]);
  const [sending, setSending] = useState(false);
  const log = useRef<HTMLOListElement>(null);

  useEffect(() => {
    sessionStorage.setItem(STORED, sessionId);
    if (query.get("session") !== sessionId) navigate(`/chat?session=${encodeURIComponent(sessionId)}`, true);
    let cancelled = false;
    setBubbles([]);
    getJson<{ entries: Entry[] }>(sessionPath(sessionId, "/history?limit=100")).then(
      ({ entries }) => {
        if (cancelled) return;
        setBubbles(
          entries.flatMap((e): Bubble[] =>
            e.type === "message" && (e.role === "user" || e.role === "assistant")
              ? [{ id: e.id, role: e.role, text: e.content }]
              : [],
          ),
        );
      },
      (caught: unknown) => {
        if (cancelled || (caught instanceof ApiError && caught.status === 404)) return;
        setBubbles([{ id: "load-error", role: "error", text: (caught as Error).message }]);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [sessionId]);

  useEffect(() => {
    log.current?.lastElementChild?.scrollIntoView({ block: "end" });
  }, [bubbles]);

  const send = async (event: Event) => {
    event.preventDefault();
    const message = text.trim();
    if (!message || sending) return;
    const replyId = `reply-${Date.now()}`;
    setText("");
    setSending(true);
    setBubbles((current) => [
      ...current,
      { id: `user-${Date.now()}`, role: "user", text: message },
      { id: replyId, role: "assistant", text: "", deltas: 0, streaming: true },
    ]);
    const update = (change: (bubble: Bubble) => Bubble) =>
      setBubbles((current) => current.map((b) => (b.id === replyId ? change(b) : b)));
    const stop = live.on("chat.delta", (data) => {
      const delta = data as { key: string; delta: string };
      if (delta.key !== sessionId) return;
      update((b) => ({ ...b, text: b.text + delta.delta, deltas: (b.deltas ?? 0) + 1 }));
    });
    try {
      const result = await live.call<{ reply: string | null; notice?: string }>("chat.send", {
        message,
        session: sessionId,
        ...(agent ? { agent } : {}),
      });
      update((b) => ({ ...b, text: result.reply ?? result.notice ?? b.text, streaming: false }));
    } catch (caught) {
      update((b) => ({ ...b, role: "error", text: (caught as Error).message, streaming: false }));
    } finally {
      stop();
      setSending(false);
    }
  };

  return (
    <section class="page chat-page" aria-labelledby="chat-title">
      <div class="chat-head">
        <h1 id="chat-title">Chat</h1>
        <span class="muted">
          Session <a href={sessionHref(sessionId)}>{sessionId}</a>
        </span>
        <button
          type="button"
          class="ghost"
          onClick={() => navigate(`/chat?session=${encodeURIComponent(newSessionId())}`)}
        >
          New chat
        </button>
      </div>
      <ol class="chat-log card" ref={log} aria-live="polite" aria-label="Conversation">
        {bubbles.length === 0 && <li class="muted empty">Say something to start this session.</li>}
        {bubbles.map((bubble) => (
          <li
            key={bubble.id}
            class={`bubble bubble-${bubble.role}${bubble.streaming ? " streaming" : ""}`}
            data-deltas={bubble.deltas}
            data-streaming={bubble.streaming ? "true" : "false"}
          >
            <span class="sr-only">
              {bubble.role === "user" ? "You" : bubble.role === "error" ? "Error" : "Agent"}:{" "}
            </span>
            {/* An answer still arriving is shown whole; a long stored one is cut to its first few KB. */}
            {bubble.streaming || !bubble.text ? (
              bubble.text || "…"
            ) : (
              <LongText class="bubble-text" text={bubble.text} />
            )}
          </li>
        ))}
      </ol>
      <form class="composer" onSubmit={send}>
        <AgentSelect
          id="chat-agent"
          agents={agents}
          value={agent}
          emptyLabel={`Default${agents ? ` (${agents.defaultAgent})` : ""}`}
          onChange={setAgent}
        />
        <div class="field grow">
          <label for="chat-text">Message</label>
          <textarea
            id="chat-text"
            rows={2}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey) void send(e);
            }}
          />
        </div>
        <button type="submit" disabled={sending || status !== "open" || !text.trim()}>
          {sending ? "Sending…" : "Send"}
        </button>
      </form>
    </section>
  );
}
