import type { Pool } from "pg";
import type { Entry } from "../../model/entry.js";
import { inTransaction, query } from "./pool.js";
import { searchColumns } from "./search-words.js";

/** Entries per transaction: small enough that a batch never holds its rows for long. */
const BATCH = 500;

/**
 * Recomputes, in the background, the search columns of the entries stored before migration 4, whose words
 * the server had folded (`to_tsvector`, migration 3): its parser keeps `INV-200` as `inv` and `-200`,
 * `3.14` and `x.y` whole, and keeps accents where `unaccent` is missing, so today's queries (search-words.ts,
 * folded as every store's word index is) missed them. Migration 6 records in `search_reindex` the highest
 * entry to redo; each batch, newest first, is one transaction that takes that row `FOR UPDATE SKIP LOCKED`
 * (one process at a time; another one's restart resumes where it stopped), rewrites the columns of up to
 * BATCH entries below it and moves it down, and the last batch deletes it. Recomputing is idempotent, so
 * entries already written by this code are safe to redo.
 */
export class SearchReindex {
  private stopped = false;
  private done: Promise<void> = Promise.resolve();
  private active = false;

  constructor(private readonly pool: Pool) {}

  /** Whether the database has entries left to re-index (asked once, at open). */
  static async pending(pool: Pool): Promise<boolean> {
    const rows = await query<{ pending: boolean }>(
      pool,
      "SELECT EXISTS (SELECT 1 FROM search_reindex) AS pending",
    );
    return rows[0]?.pending === true;
  }

  /** Starts the work; a failure leaves it for the next start. */
  start(): void {
    this.active = true;
    this.done = this.run()
      .catch(() => {})
      .finally(() => {
        this.active = false;
      });
  }

  /** Whether this process is still re-indexing (search then says `indexing`). */
  get running(): boolean {
    return this.active;
  }

  /** Resolves once this process's work has ended (finished, stopped, or left to another process). */
  finished(): Promise<void> {
    return this.done;
  }

  /** Stops after the batch in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  private async run(): Promise<void> {
    while (!this.stopped && (await this.batch())) {}
  }

  /** One batch; false when nothing is left for this process. */
  private batch(): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const marks = await client.query<{ upto: string }>(
        "SELECT upto FROM search_reindex FOR UPDATE SKIP LOCKED LIMIT 1",
      );
      const upto = marks.rows[0]?.upto;
      if (upto === undefined) return false;
      const { rows } = await client.query<{ n: string; data: string }>(
        `SELECT n, data FROM entries WHERE n <= $1 AND type = 'message' ORDER BY n DESC LIMIT ${BATCH}`,
        [upto],
      );
      const ns: string[] = [];
      const words: Array<string | null> = [];
      const cjk: Array<string | null> = [];
      for (const row of rows) {
        const columns = columnsOf(row.data);
        if (!columns) continue;
        ns.push(row.n);
        words.push(columns.words);
        cjk.push(columns.cjk);
      }
      await client.query(
        `UPDATE entries e SET search_words = u.words::tsvector, search_cjk = u.cjk
         FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u(n, words, cjk) WHERE e.n = u.n`,
        [ns, words, cjk],
      );
      const last = rows.at(-1);
      if (rows.length < BATCH || last === undefined) {
        await client.query("DELETE FROM search_reindex");
        return false;
      }
      await client.query("UPDATE search_reindex SET upto = $1", [(BigInt(last.n) - 1n).toString()]);
      return true;
    });
  }
}

/** The entry's columns; undefined for a row whose JSON does not parse (left as it was). */
function columnsOf(data: string): ReturnType<typeof searchColumns> | undefined {
  try {
    return searchColumns(JSON.parse(data) as Entry);
  } catch {
    return undefined;
  }
}
