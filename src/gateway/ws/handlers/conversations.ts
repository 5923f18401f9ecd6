import type { Session } from "../../../model/session.js";
import { encodeCursor } from "../../../store/session-query.js";
import { type Handler, sessionInfo, targetKey } from "../connection.js";
import { optionalBoolean, optionalInteger, optionalString } from "../protocol.js";

/** The most conversations or history entries one request answers with: a reply's size stays bounded. */
export const MAX_PAGE = 1000;

/** `conversations.list` {agent?, sender?, limit?, cursor?} → {conversations: SessionList[], nextCursor?}. */
export const list: Handler = async (params, { deps }) => {
  const agent = optionalString(params, "agent");
  const sender = optionalString(params, "sender");
  const limit = optionalInteger(params, "limit", 1, MAX_PAGE) ?? MAX_PAGE;
  const matches: Session[] = [];
  let cursor = optionalString(params, "cursor");
  do {
    const page = await deps.engine.sessions.list({
      limit: MAX_PAGE,
      ...(agent !== undefined ? { agent } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    cursor = page.nextCursor;
    for (const [i, session] of page.sessions.entries()) {
      if (sender !== undefined && session.createdBy !== sender) continue;
      matches.push(session);
      if (matches.length === limit) {
        // The next page starts after this session (the store's own cursor, in its default "created" order).
        if (i < page.sessions.length - 1) cursor = encodeCursor("created", session);
        break;
      }
    }
  } while (cursor !== undefined && matches.length < limit);
  const queued = deps.engine.queued();
  const now = Date.now();
  return {
    conversations: matches.map((s) => sessionInfo(s, queued, now)),
    ...(cursor !== undefined ? { nextCursor: cursor } : {}),
  };
};

/**
 * `conversations.history` {session?, limit?, before?, all?} → {key, entries, more}: the newest `limit`
 * entries (at most and by default 1000); `more` says older ones exist (ask again with `before` = the first seq).
 */
export const history: Handler = async (params, context) => {
  const key = targetKey(context, optionalString(params, "session"));
  const limit = optionalInteger(params, "limit", 1, MAX_PAGE) ?? MAX_PAGE;
  const before = optionalInteger(params, "before", 1);
  const includeArchived = optionalBoolean(params, "all");
  const entries = await context.deps.engine.history(key, {
    limit: limit + 1,
    ...(before !== undefined ? { before } : {}),
    ...(includeArchived !== undefined ? { includeArchived } : {}),
  });
  const more = entries.length > limit;
  return { key, entries: more ? entries.slice(1) : entries, more };
};
