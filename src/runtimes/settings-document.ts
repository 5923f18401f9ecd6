import { statSync } from "node:fs";
import type { z } from "zod";
import { readJsonFile, writeJsonFile } from "./json-file.js";

/**
 * Where a small settings document (the agents layer, the work sessions) is kept: a JSON file beside the
 * SQLite or JSONL store, a row of the PostgreSQL database every gateway shares (postgres-document.ts),
 * or memory. Reads are synchronous (a turn asks on its way); changes are read-modify-write on the latest
 * value, so two processes changing it at once both keep their change.
 */
export interface SettingsDocument<T> {
  /** The value as this process last read it. */
  current(): T;
  /**
   * Applies `change` to the latest value and stores what it returns; `change` may throw (nothing is
   * stored). Resolves with the value stored.
   */
  change(change: (value: T) => T): Promise<T>;
  /** Resolves once a change another process announced is read (at once when none is pending). */
  /** Resolves once a read of another process's change is done; undefined when none is in flight. */
  settled(): Promise<void> | undefined;
}

export class MemoryDocument<T> implements SettingsDocument<T> {
  constructor(private value: T) {}

  current(): T {
    return this.value;
  }

  async change(change: (value: T) => T): Promise<T> {
    this.value = change(this.value);
    return this.value;
  }

  settled(): undefined {
    return undefined;
  }
}

/**
 * A JSON file replaced atomically. With `reread`, every read checks whether another process (the CLI
 * beside a gateway) replaced it; a change always starts from the file as it is.
 */
export class FileDocument<T> implements SettingsDocument<T> {
  private value: T;
  private version = "";

  constructor(
    private readonly path: string,
    /** Called only when the file exists, so that a data dir without one never loads zod. */
    private readonly schema: () => z.ZodType<T>,
    private readonly empty: () => T,
    private readonly reread: boolean,
  ) {
    this.value = empty();
    this.refresh();
  }

  current(): T {
    if (this.reread) this.refresh();
    return this.value;
  }

  async change(change: (value: T) => T): Promise<T> {
    this.refresh();
    const next = change(this.value);
    writeJsonFile(this.path, next);
    this.version = "";
    this.refresh();
    return this.value;
  }

  settled(): undefined {
    return undefined;
  }

  private refresh(): void {
    const stat = statSync(this.path, { throwIfNoEntry: false });
    const version = stat ? `${stat.ino}:${stat.mtimeMs}:${stat.size}` : "";
    if (version === this.version) return;
    this.value = stat ? readJsonFile(this.path, this.schema()) : this.empty();
    this.version = version;
  }
}
