import { validateKey } from "../../../keys/index.js";
import { branchesAnswer, forkAnswer, rewindAnswer } from "../../branch-answers.js";
import { existingKey } from "../../existing-key.js";
import { type Handler, type HandlerContext, targetKey } from "../connection.js";
import { invalidParam, optionalInteger, optionalString } from "../protocol.js";

/** The key a method names (`session`, else the connection's own), which must have a session. */
function sessionKey(params: Record<string, unknown>, context: HandlerContext): Promise<string> {
  return existingKey(context.deps.engine, validateKey(targetKey(context, optionalString(params, "session"))));
}

/** `sessions.fork` {session?, at_seq?, to_key?} → {key, session, forked_from} as `POST …/fork`. */
export const fork: Handler = async (params, context) => {
  const atSeq = optionalInteger(params, "at_seq", 1);
  const toKey = optionalString(params, "to_key");
  if (toKey !== undefined) validateKey(toKey);
  const key = await sessionKey(params, context);
  const result = await context.deps.engine.fork(key, {
    ...(atSeq !== undefined ? { atSeq } : {}),
    ...(toKey !== undefined ? { toKey } : {}),
  });
  return forkAnswer(result);
};

/** `sessions.rewind` {session?, to_seq, expect_head?} → {session, archived, forked_from} as `POST …/rewind`. */
export const rewind: Handler = async (params, context) => {
  const toSeq = optionalInteger(params, "to_seq", 1);
  if (toSeq === undefined)
    throw invalidParam("to_seq", "an integer of at least 1 (the first entry left out)");
  const expectHead = optionalInteger(params, "expect_head", 0);
  const key = await sessionKey(params, context);
  const result = await context.deps.engine.rewind(key, {
    toSeq,
    ...(expectHead !== undefined ? { expectHead } : {}),
  });
  return rewindAnswer(result);
};

/** `sessions.branches` {session?} → {key, branches} as `GET …/branches`. */
export const branches: Handler = async (params, context) => {
  const key = await sessionKey(params, context);
  return branchesAnswer(key, await context.deps.engine.branches(key));
};
