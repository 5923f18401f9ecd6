import type { SessionEvent } from "../../../turns/events.js";
import type { Handler } from "../connection.js";

/** The subscription slot of `sessions.watch`: a control character, so no session key can take it. */
export const WATCH_ALL = "\u0000all";

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

/** `sessions.watch` {} → {watching: true}; then every change to any session as a `sessions.changed` event. */
export const watch: Handler = async (_params, { deps, connection }) => {
  if (!connection.subscriptions.has(WATCH_ALL)) {
    const stop = deps.engine.events.on((event) => connection.event("sessions.changed", changeOf(event)));
    connection.subscriptions.set(WATCH_ALL, stop);
  }
  return { watching: true };
};

/** `sessions.unwatch` {} → {watching: false}. */
export const unwatch: Handler = async (_params, { connection }) => {
  connection.subscriptions.get(WATCH_ALL)?.();
  connection.subscriptions.delete(WATCH_ALL);
  return { watching: false };
};
