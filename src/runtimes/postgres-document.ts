import type { Pool } from "pg";
import type { z } from "zod";
import { SessiondError } from "../model/errors.js";
import type { PgNotifications } from "../store/postgres/notifications.js";
import { inTransaction, query } from "../store/postgres/pool.js";
import type { SettingsDocument } from "./settings-document.js";

/** NOTIFY payload: the name of the document that changed (never its content). */
export const SETTINGS_CHANNEL = "sessiond_settings";

interface Row {
  body: unknown;
  version: string;
}

/**
 * A settings document as a row of `settings_documents` (migration 5) in the database every gateway shares.
 * A change locks the row (`FOR UPDATE`), applies itself to what is stored, and commits with a NOTIFY naming
 * the document; the other processes read it again on that NOTIFY (and after their LISTEN connection comes
 * back), and `settled` waits for such a read. Versions only go forward: a read that raced a newer write
 * does not bring an older value back.
 */
export class PgDocument<T> implements SettingsDocument<T> {
  private value: T;
  private version = -1n;
  private reading: Promise<void> | undefined;
  private again = false;

  private constructor(
    private readonly pool: Pool,
    private readonly name: string,
    private readonly schema: z.ZodType<T>,
    private readonly empty: () => T,
  ) {
    this.value = empty();
  }

  /** Reads the document and listens for the other processes' changes to it. */
  static async open<T>(
    pool: Pool,
    notifications: PgNotifications,
    name: string,
    schema: z.ZodType<T>,
    empty: () => T,
  ): Promise<PgDocument<T>> {
    const document = new PgDocument(pool, name, schema, empty);
    await notifications.listen(SETTINGS_CHANNEL, (payload) => {
      if (payload === name) document.reload();
    });
    notifications.onReconnect(() => document.reload());
    await document.read();
    return document;
  }

  current(): T {
    return this.value;
  }

  async change(change: (value: T) => T): Promise<T> {
    return inTransaction(this.pool, async (client) => {
      await client.query(
        "INSERT INTO settings_documents (name, body) VALUES ($1, $2::jsonb) ON CONFLICT (name) DO NOTHING",
        [this.name, JSON.stringify(this.empty())],
      );
      const { rows } = await client.query<Row>(
        "SELECT body, version FROM settings_documents WHERE name = $1 FOR UPDATE",
        [this.name],
      );
      const next = change(this.parse(rows[0]!.body));
      const updated = await client.query<{ version: string }>(
        `UPDATE settings_documents SET body = $2::jsonb, version = version + 1 WHERE name = $1 RETURNING version`,
        [this.name, JSON.stringify(next)],
      );
      await client.query("SELECT pg_notify($1, $2)", [SETTINGS_CHANNEL, this.name]);
      return [next, BigInt(updated.rows[0]!.version)] as const;
    }).then(([next, version]) => {
      this.accept(next, version);
      return next;
    });
  }

  settled(): Promise<void> | undefined {
    return this.reading ? this.settle() : undefined;
  }

  private async settle(): Promise<void> {
    while (this.reading) await this.reading;
  }

  /** Reads it again now (and once more after a read in flight, which may have started before the change). */
  private reload(): void {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.read()
      .catch(() => {
        // The next NOTIFY or reconnect reads it again; until then the value last read stands.
      })
      .finally(() => {
        this.reading = undefined;
        if (this.again) {
          this.again = false;
          this.reload();
        }
      });
  }

  private async read(): Promise<void> {
    const rows = await query<Row>(this.pool, "SELECT body, version FROM settings_documents WHERE name = $1", [
      this.name,
    ]);
    const row = rows[0];
    if (row) this.accept(this.parse(row.body), BigInt(row.version));
    else this.accept(this.empty(), 0n);
  }

  private accept(value: T, version: bigint): void {
    if (version <= this.version) return;
    this.value = value;
    this.version = version;
  }

  private parse(body: unknown): T {
    // The store's pool leaves jsonb as text (pool.ts).
    const parsed = this.schema.safeParse(typeof body === "string" ? JSON.parse(body) : body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new SessiondError(
        "STORE_CORRUPT",
        `settings_documents ${this.name}: ${issue?.path.join(".")}: ${issue?.message}`,
      );
    }
    return parsed.data;
  }
}
