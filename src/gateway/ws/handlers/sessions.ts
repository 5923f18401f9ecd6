import { validateKey } from "../../../keys/index.js";
import { type Handler, sessionInfo, targetKey } from "../connection.js";
import { optionalInteger, optionalString } from "../protocol.js";

/** `sessions.list` {agent?, limit?, cursor?} → {sessions: SessionList[], nextCursor?} */
export const list: Handler = async (params, { deps }) => {
  const agent = optionalString(params, "agent");
  const limit = optionalInteger(params, "limit", 1, 1000);
  const cursor = optionalString(params, "cursor");
  const page = await deps.engine.sessions.list({
    ...(agent !== undefined ? { agent } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  const queued = deps.engine.queued();
  const now = Date.now();
  return {
    sessions: page.sessions.map((s) => sessionInfo(s, queued, now)),
    ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
  };
};

/** `sessions.kill` {session?} → {killed}: aborts the key's running chat.send turns; its stored data stays. */
export const kill: Handler = async (params, context) => {
  const key = validateKey(targetKey(context, optionalString(params, "session")));
  return { key, killed: context.turns.kill(key) };
};

/** `sessions.compact` {session?} → {summary} (CrabTalk's CompactResponse). */
export const compact: Handler = async (params, context) => {
  const key = targetKey(context, optionalString(params, "session"));
  const { summary } = await context.deps.engine.compact(key);
  return { key, summary };
};

/** `sessions.subscribe` {session?} → {key}; then every session event of that key as `session.<type>`. */
export const subscribe: Handler = async (params, context) => {
  const key = validateKey(targetKey(context, optionalString(params, "session")));
  const { connection, deps } = context;
  if (!connection.subscriptions.has(key)) {
    const unsubscribe = deps.engine.events.on((event) => {
      if (event.key === key) connection.event(`session.${event.type}`, event);
    });
    connection.subscriptions.set(key, unsubscribe);
  }
  return { key, subscribed: true };
};

/** `sessions.unsubscribe` {session?} → {key, subscribed: false}. */
export const unsubscribe: Handler = async (params, context) => {
  const key = validateKey(targetKey(context, optionalString(params, "session")));
  const { subscriptions } = context.connection;
  subscriptions.get(key)?.();
  subscriptions.delete(key);
  return { key, subscribed: false };
};
