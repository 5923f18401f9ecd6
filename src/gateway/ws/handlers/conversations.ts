import type { Session } from "../../../model/session.js";
import { type Handler, sessionInfo, targetKey } from "../connection.js";
import { optionalBoolean, optionalInteger, optionalString } from "../protocol.js";

const PAGE = 1000;

/** `conversations.list` {agent?, sender?} → {conversations: SessionList[]} (CrabTalk's ConversationList). */
export const list: Handler = async (params, { deps }) => {
  const agent = optionalString(params, "agent");
  const sender = optionalString(params, "sender");
  const matches: Session[] = [];
  let cursor: string | undefined;
  do {
    const page = await deps.engine.sessions.list({
      limit: PAGE,
      ...(agent !== undefined ? { agent } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    matches.push(...page.sessions.filter((s) => sender === undefined || s.createdBy === sender));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const queued = deps.engine.queued();
  const now = Date.now();
  return { conversations: matches.map((s) => sessionInfo(s, queued, now)) };
};

/** `conversations.history` {session?, limit?, before?, all?} → {key, entries}. */
export const history: Handler = async (params, context) => {
  const key = targetKey(context, optionalString(params, "session"));
  const limit = optionalInteger(params, "limit", 1);
  const before = optionalInteger(params, "before", 1);
  const includeArchived = optionalBoolean(params, "all");
  const entries = await context.deps.engine.history(key, {
    ...(limit !== undefined ? { limit } : {}),
    ...(before !== undefined ? { before } : {}),
    ...(includeArchived !== undefined ? { includeArchived } : {}),
  });
  return { key, entries };
};
