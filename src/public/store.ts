/** `sessiond/store`: the stores and the `Store` interface, for callers that build or read one themselves. */
export { JsonlStore, type JsonlStoreOptions } from "../store/jsonl/jsonl-store.js";
export type { LineProblem } from "../store/jsonl/session-file.js";
export { MemoryStore } from "../store/memory/memory-store.js";
export { openStore, type StoreConfig } from "../store/open.js";
export { SqliteStore, type SqliteStoreOptions } from "../store/sqlite/sqlite-store.js";
export type * from "../store/store.js";
