import type { SessionEvent } from "../../turns/events.js";

/** What a `session.<type>` event's data holds, for every type a session event can have (the compiler checks). */
const SESSION_EVENTS: { readonly [T in SessionEvent["type"]]: string } = {
  appended: "{type, key, session, entries}: entries were stored (by this gateway or, on PostgreSQL, another)",
  reset: "{type, key, cause, archived, current?}: a new generation began; archived is the one before",
  updated: "{type, key, session}: the session row changed (its title or settings, for instance)",
  deleted: "{type, key, sessions}: the key was deleted, with this many generations",
  "turn.started": "{type, key, agent}: a turn began",
  "turn.finished": "{type, key, agent, ok, error?}: a turn ended",
};

/** Every event the WebSocket sends, with what its data holds; the OpenAPI document's `x-websocket.events`. */
export function eventDocs(): Record<string, string> {
  return {
    connected: "{connectionId, channel, peer}: first, on every connection",
    "chat.delta": "{id, key, delta}: a piece of chat.send's reply (id is the request's)",
    ...Object.fromEntries(
      Object.entries(SESSION_EVENTS).map(([type, data]) => [
        `session.${type}`,
        `${data}; after sessions.subscribe, for that key`,
      ]),
    ),
    "sessions.changed":
      "{type, key, session? | archived? | agent, ok?}: after sessions.watch, the latest change per session and kind, gathered (never the entries)",
  };
}
