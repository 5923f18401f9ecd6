import { join } from "node:path";
import type { Inbox } from "../model/inbox.js";
import { MemoryInbox } from "../store/memory/inbox.js";
import type { StoreConfig } from "../store/open.js";
import { capabilitiesOf, type Store } from "../store/store.js";

/**
 * The inbox beside the store (`turns.inbox`): the caller's own; none when false; else the store's kind —
 * a table of its SQLite file, `inbox.jsonl` in a JSONL store's `.sessiond/` folder, the PostgreSQL
 * store's table — and in memory for a memory store or a store passed in. Loads only the backend's module.
 */
export async function openInbox(
  given: Inbox | false | undefined,
  store: Store,
  config: StoreConfig | Store,
): Promise<Inbox | undefined> {
  if (given === false) return undefined;
  if (given) return given;
  if (hasInbox(store)) return store.inbox();
  if ("append" in config) return new MemoryInbox();
  switch (config.backend) {
    case "sqlite":
      return new (await import("../store/sqlite/inbox.js")).SqliteInbox({ path: config.path });
    case "jsonl": {
      const { JsonlInbox } = await import("../store/jsonl/inbox.js");
      const { META_DIR } = await import("../store/jsonl/meta-dir.js");
      return new JsonlInbox({ dir: join(config.path, META_DIR) });
    }
    default:
      return new MemoryInbox();
  }
}

function hasInbox(store: Store): store is Store & { inbox(): Inbox } {
  return capabilitiesOf(store).inbox === true;
}
