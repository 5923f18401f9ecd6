import type { Handler } from "../connection.js";
import { ProtocolError, requiredString } from "../protocol.js";

/** `turns.get` {id}: the turn's state and reply, as `GET /api/turns/{id}`. */
export const get: Handler = async (params, { deps }) => {
  const id = requiredString(params, "id");
  const status = await deps.engine.turnStatus(id);
  if (!status) throw new ProtocolError("NOT_FOUND", `no turn ${JSON.stringify(id)}`);
  if (status.state === "evicted") {
    throw new ProtocolError("RESULT_EVICTED", `the result of turn ${JSON.stringify(id)} was evicted`);
  }
  return status;
};
