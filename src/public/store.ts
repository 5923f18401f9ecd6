/**
 * `sessiond/store`: the stores and the `Store` interface, for callers that build or read one themselves;
 * and for the author of a backend, the `StoreDriver` interface, the `LogStore` that runs a driver as a
 * `Store`, and the memory driver as a reference. `sessiond/store/testing` has the contract to run it with.
 */
export type * from "../store/driver.js";
export { JsonlStore, type JsonlStoreOptions } from "../store/jsonl/jsonl-store.js";
export type { LineProblem } from "../store/jsonl/session-file.js";
export { LogStore, type LogStoreOptions } from "../store/log-store.js";
export { MemoryDriver } from "../store/memory/memory-driver.js";
export { MemoryStore } from "../store/memory/memory-store.js";
export { openStore, type StoreConfig } from "../store/open.js";
export type { NormalisedQuery } from "../store/session-query.js";
export { SqliteStore, type SqliteStoreOptions } from "../store/sqlite/sqlite-store.js";
export type * from "../store/store.js";
