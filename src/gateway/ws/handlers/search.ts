import { searchQueryFrom } from "../../../search/query-params.js";
import { searchStore } from "../../../search/searchable.js";
import type { Handler } from "../connection.js";
import { ProtocolError } from "../protocol.js";

/** `sessions.search` {q, agent?, channel?, prefix?, role?, since?, until?, archived?, limit?, cursor?} → SearchResult */
export const search: Handler = async (params, { deps }) => {
  const text = (name: string): string | undefined => {
    const value = params[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "number") return String(value);
    if (typeof value !== "string") throw new ProtocolError("INVALID_ARGUMENT", `${name} must be a string`);
    return value;
  };
  return searchStore(deps.engine.store, searchQueryFrom(text("q") ?? "", text));
};
