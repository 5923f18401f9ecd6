import type { StoreDriver } from "../driver.js";
import type { Store } from "../store.js";
import type { ChildStore } from "./children.js";

/**
 * What `runStoreContract` runs a backend with. Only `name`, `open` and `persistent` are required: every
 * case that needs more (a child process, a fault on the disk, a second process) runs where the factory
 * gives what it needs, and is skipped otherwise.
 */
export interface StoreFactory {
  name: string;
  /**
   * Opens the store kept in `dir` (a fresh temporary directory per case); the same dir again reopens it.
   * A driver is run by `new LogStore(driver)`.
   */
  open(dir: string): Promise<Store | StoreDriver>;
  /** Whether data survives close and reopen. */
  persistent: boolean;
  /**
   * How a child process opens the store kept in `dir`: for the SIGKILL cases (a persistent store) and,
   * with `secondProcess`, the case of two processes writing at once.
   */
  child?: (dir: string) => ChildStore;
  /** Checks the files in `dir` are internally consistent after a crash; throws if not. */
  verifyFiles?: (dir: string) => void;
  /**
   * Another process may write the store while this one does (SQLite, JSONL, PostgreSQL; not memory).
   * `sharedKeys`: both may append to the same keys at once; otherwise each process owns its keys.
   */
  secondProcess?: { sharedKeys: boolean };
  /** The faults this backend can have injected; each fault case runs where its capability is given. */
  faults?: StoreFaults;
}

/** Optional capabilities of a factory: ways to make the backend's disk fail under a writer. */
export interface StoreFaults {
  /** A writer on the store kept in `dir` whose `fail()` makes the fsyncs fail with EIO. */
  eio?: (dir: string) => Promise<FaultyWriter>;
  /** A writer on the store kept in `dir` whose `fail()` makes the writes fail with ENOSPC (a full disk). */
  enospc?: (dir: string) => Promise<FaultyWriter>;
  /**
   * Run after a SIGKILL of the writer: leaves the files in `dir` holding only what a power cut would
   * (what the backend had not fsync'd is gone).
   */
  powerCut?: (dir: string) => void;
}

/** How a write was answered: the entry's id, or the error's code and `details.outcome`. */
export interface WriteAnswer {
  id?: string;
  code?: string;
  outcome?: string;
}

/**
 * A writer on a store whose disk can be made to fail. It runs where the fault can be injected: in this
 * process through a file layer, or in a child under an LD_PRELOAD layer (a library's own I/O).
 */
export interface FaultyWriter {
  /** Appends one message to `key` (strict durability; the key's session is created when missing). */
  append(key: string, content: string): Promise<WriteAnswer>;
  /** From now on the disk fails (the fault this writer was made for)... */
  fail(): void;
  /** ...until this: the disk recovers (fsyncs succeed again, there is room again). */
  heal(): void;
  close(): Promise<void>;
}

/** The session a FaultyWriter creates for a new key. */
export const faultInit = { agent: "main", channel: "faults", createdBy: "u1" };

/** The answer a FaultyWriter gives for a write that failed with `error`. */
export function answerOf(error: unknown): WriteAnswer {
  const e = error as { code?: string; details?: { outcome?: string } };
  return { code: e.code, outcome: e.details?.outcome };
}
