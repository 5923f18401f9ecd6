import type { Pool, PoolClient } from "pg";
import type { WriteGroup } from "../driver.js";
import { keysOf } from "./batch-commit.js";
import { connect, isConnectionError, release } from "./pool.js";

interface Hold {
  client: PoolClient;
  keys: readonly string[];
  /** A commit ends its transaction and gives its connection back. */
  taken: boolean;
}

/**
 * Keys held for this writer's next commit of them (`StoreDriver.hold`): a connection in a transaction
 * with the keys' current sessions locked FOR UPDATE, in key order. Another process's commit to them waits
 * until that commit is over, so an operation refused as stale once is planned again on what it reads and
 * commits, instead of losing to a process that keeps writing the same keys until it gives up. A hold that
 * cannot be had (a deadlock, the server away) is no hold: the operation is planned again as before.
 */
export class KeyHolds {
  private readonly byKey = new Map<string, Hold>();

  constructor(private readonly pool: Pool) {}

  async hold(keys: readonly string[]): Promise<() => void> {
    let client: PoolClient;
    try {
      client = await connect(this.pool);
    } catch {
      return () => {};
    }
    try {
      await client.query("BEGIN");
      await client.query(
        "SELECT 1 FROM sessions WHERE key = ANY($1::text[]) AND state = 'active' ORDER BY key FOR UPDATE",
        [[...keys].sort()],
      );
    } catch (error) {
      await this.end(client, error);
      return () => {};
    }
    const hold: Hold = { client, keys, taken: false };
    for (const key of keys) this.byKey.set(key, hold);
    return () => {
      if (hold.taken) return;
      this.drop(hold);
      void this.end(client);
    };
  }

  /**
   * The connection of the hold every group's keys are in, taken for their commit; undefined when none
   * is. A hold that has only some of them is ended first: the commit, on another connection, would wait
   * for its locks, and it ends only after that commit.
   */
  async take(groups: readonly WriteGroup[]): Promise<PoolClient | undefined> {
    if (this.byKey.size === 0) return undefined;
    const touched = new Set<Hold>();
    let all = true;
    for (const group of groups) {
      for (const key of keysOf(group)) {
        const held = this.byKey.get(key);
        if (held) touched.add(held);
        else all = false;
      }
    }
    const [hold] = touched;
    if (all && hold && touched.size === 1) {
      hold.taken = true;
      this.drop(hold);
      return hold.client;
    }
    for (const other of touched) {
      other.taken = true;
      this.drop(other);
      await this.end(other.client);
    }
    return undefined;
  }

  private drop(hold: Hold): void {
    for (const key of hold.keys) if (this.byKey.get(key) === hold) this.byKey.delete(key);
  }

  /** Rolls the hold's transaction back and gives its connection back (dropped when broken). */
  private async end(client: PoolClient, error?: unknown): Promise<void> {
    if (error !== undefined && isConnectionError(error)) {
      release(client, error);
      return;
    }
    await client.query("ROLLBACK").then(
      () => release(client),
      (e: unknown) => release(client, e),
    );
  }
}
