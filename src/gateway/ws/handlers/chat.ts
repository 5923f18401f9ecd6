import { envelopeFor, type Handler } from "../connection.js";
import { optionalBoolean, optionalString, requiredString } from "../protocol.js";

/**
 * `chat.send` {message, session?, agent?, incognito?}: streams `chat.delta` {id, key, delta} events, then answers
 * {key, reply, seq}. `sessions.kill` on the key aborts it (TURN_CANCELLED).
 */
export const send: Handler = async (params, { deps, turns, connection, request }) => {
  const text = requiredString(params, "message");
  const envelope = envelopeFor(connection.params, text, {
    session: optionalString(params, "session"),
    agent: optionalString(params, "agent"),
  });
  const incognito = optionalBoolean(params, "incognito");
  const { key } = deps.engine.route(envelope);
  const { signal, done } = turns.start(key);
  try {
    const result = await deps.engine.turn(envelope, {
      signal,
      ...(incognito ? { incognito } : {}),
      onEvent: (event) => {
        if (event.type === "text")
          connection.event("chat.delta", { id: request.id, key, delta: event.delta });
      },
    });
    return {
      key: result.key,
      reply: result.reply?.content ?? null,
      seq: result.reply?.seq ?? null,
      ...(result.notice !== undefined ? { notice: result.notice } : {}),
    };
  } finally {
    done();
  }
};
