import type Database from "better-sqlite3";

/** better-sqlite3 caches nothing itself; a statement per distinct SQL text is prepared once. */
export class Statements {
  private readonly cache = new Map<string, Database.Statement>();
  constructor(private readonly db: Database.Database) {}
  get(sql: string): Database.Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }
}

export function sqliteCode(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : "";
}

/** SQLite's answer for a file that is not (or no longer) a sound database. */
export function isDamagedError(error: unknown): boolean {
  const code = sqliteCode(error);
  return code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB";
}
