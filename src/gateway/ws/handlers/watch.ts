import type { SessionEvent } from "../../../turns/events.js";
import type { Connection, Handler } from "../connection.js";

/** The subscription slot of `sessions.watch`: a control character, so no session key can take it. */
export const WATCH_ALL = "\u0000all";

/**
 * How long changes gather before a watcher is told. Within it, each key's latest row change and latest
 * turn event win: a busy gateway sends a watcher one event per busy key per interval, not one per append.
 */
export const WATCH_INTERVAL_MS = 100;

/** What a watcher is told: the change and the session's new row, never the entries themselves. */
export function changeOf(event: SessionEvent): Record<string, unknown> {
  switch (event.type) {
    case "appended":
    case "updated":
      return { type: event.type, key: event.key, session: event.session };
    case "reset":
      return {
        type: "reset",
        key: event.key,
        cause: event.cause,
        ...(event.current ? { session: event.current } : { archived: event.archived }),
      };
    case "deleted":
      return { type: "deleted", key: event.key };
    case "turn.started":
      return { type: event.type, key: event.key, agent: event.agent };
    case "turn.finished":
      return { type: event.type, key: event.key, agent: event.agent, ok: event.ok };
  }
}

/** Gathers one watcher's changes and sends them every WATCH_INTERVAL_MS, the latest per key and kind. */
function coalescing(
  connection: Connection,
  isIncognito: (key: string) => boolean,
): { add(event: SessionEvent): void; stop(): void } {
  const rows = new Map<string, Record<string, unknown>>();
  const turns = new Map<string, Record<string, unknown>>();
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    for (const change of rows.values()) connection.event("sessions.changed", change);
    for (const change of turns.values()) connection.event("sessions.changed", change);
    rows.clear();
    turns.clear();
  };
  return {
    add(event) {
      const slot = event.type === "turn.started" || event.type === "turn.finished" ? turns : rows;
      // Re-inserted, so the flush keeps the order in which keys last changed.
      slot.delete(event.key);
      const change = changeOf(event);
      // Marked as the session list marks it (routes/sessions.ts): kept in memory only.
      if (change.session && isIncognito(event.key)) change.session = { ...change.session, incognito: true };
      slot.set(event.key, change);
      timer ??= setTimeout(flush, WATCH_INTERVAL_MS);
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** `sessions.watch` {} → {watching: true}; then changes to any session as `sessions.changed` events. */
export const watch: Handler = async (_params, { deps, connection }) => {
  if (!connection.subscriptions.has(WATCH_ALL)) {
    const changes = coalescing(connection, (key) => deps.engine.isIncognito(key));
    const off = deps.engine.events.on((event) => changes.add(event));
    connection.subscriptions.set(WATCH_ALL, () => {
      off();
      changes.stop();
    });
  }
  return { watching: true };
};

/** `sessions.unwatch` {} → {watching: false}. */
export const unwatch: Handler = async (_params, { connection }) => {
  connection.subscriptions.get(WATCH_ALL)?.();
  connection.subscriptions.delete(WATCH_ALL);
  return { watching: false };
};
