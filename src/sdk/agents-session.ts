import { SUMMARY_HEADER } from "../context/assemble.js";
import type { Entry, EntryInput } from "../model/entry.js";
import type { StoredContext } from "../model/session.js";
import { type AgentItem, entriesToItems, itemsToEntries } from "./agent-items.js";

/**
 * The OpenAI Agents SDK's `Session` protocol over one key (`run(agent, input, { session })`): the key's
 * current session is the SDK's history. Structurally the SDK's own interface, so sessiond needs no
 * `@openai/agents` to offer it.
 */
export interface AgentsSession {
  /** The key: the same across `clearSession()`, which starts a new generation on it. */
  getSessionId(): Promise<string>;
  /** The items of the current generation, oldest first (the newest `limit` ones with a limit). */
  getItems(limit?: number): Promise<AgentItem[]>;
  /** Stored as one append, all or nothing: an item type sessiond has no entry for fails the whole call. */
  addItems(items: AgentItem[]): Promise<void>;
  /** The newest item, retracted from the items by a note entry; the history keeps it. */
  popItem(): Promise<AgentItem | undefined>;
  /** Archives the current generation (still readable) and starts an empty one. */
  clearSession(): Promise<void>;
}

/** What the session needs from the engine, all on its one key. */
export interface AgentsSessionDeps {
  key: string;
  /** Runs `work` in the key's lane, one at a time with its turns, resets and compactions. */
  inLane<T>(work: () => Promise<T>): Promise<T>;
  context(): Promise<StoredContext | undefined>;
  append(entries: EntryInput[], expectSessionId?: string): Promise<unknown>;
  /** Archives the current session; nothing when the key has none. */
  reset(): Promise<unknown>;
}

export const RETRACTED_CODE = "ITEM_RETRACTED";
const RETRACTED_SEQ = /^popItem retracted the item at seq (\d+)$/;

/** The message entries that are items: those no later `ITEM_RETRACTED` note took back. */
function itemEntries(entries: readonly Readonly<Entry>[]): Readonly<Entry>[] {
  const retracted = new Set<number>();
  for (const entry of entries) {
    if (entry.type !== "note" || entry.code !== RETRACTED_CODE) continue;
    const seq = RETRACTED_SEQ.exec(entry.text)?.[1];
    if (seq !== undefined) retracted.add(Number(seq));
  }
  return entries.filter((e) => e.type === "message" && !retracted.has(e.seq) && e.autoInjected !== true);
}

function summaryItem(context: StoredContext): AgentItem[] {
  const summary = context.summary?.summary;
  return summary ? [{ type: "message", role: "user", content: `${SUMMARY_HEADER}\n${summary}` }] : [];
}

export function agentsSession(deps: AgentsSessionDeps): AgentsSession {
  return {
    getSessionId: async () => deps.key,

    async getItems(limit) {
      if (limit !== undefined && limit <= 0) return [];
      const context = await deps.context();
      if (!context) return [];
      // A compaction's summary stands for what it replaced, as it does in a turn's context.
      const items = [...summaryItem(context), ...entriesToItems(itemEntries(context.entries))];
      return limit === undefined ? items : items.slice(-limit);
    },

    async addItems(items) {
      if (items.length === 0) return;
      const entries = itemsToEntries(items);
      await deps.inLane(() => deps.append(entries));
    },

    popItem: () =>
      deps.inLane(async () => {
        const context = await deps.context();
        if (!context) return undefined;
        const entries = itemEntries(context.entries);
        const last = entries.at(-1);
        if (!last) return undefined;
        // Converted with what precedes it, so a tool result keeps the name of the call it answers.
        const item = entriesToItems(entries).at(-1);
        await deps.append(
          [
            {
              type: "note",
              level: "info",
              code: RETRACTED_CODE,
              text: `popItem retracted the item at seq ${last.seq}`,
            },
          ],
          context.session.id,
        );
        return item;
      }),

    clearSession: () => deps.inLane(() => deps.reset()).then(() => undefined),
  };
}
