import type Database from "better-sqlite3";
import { sqliteDatabase } from "../../store/sqlite/better-sqlite3.js";
import type { ImportProblem } from "../types.js";

/**
 * Runs `read` on another system's SQLite file, opened read-only, when it has the tables named; a file
 * that is not such a database is one reported problem.
 */
export function withDatabase(
  file: string,
  tables: readonly string[],
  what: string,
  problems: ImportProblem[],
  read: (db: Database.Database) => void,
): void {
  const db = openReadOnly(file, problems);
  if (!db) return;
  try {
    if (tables.every((t) => hasTable(db, t))) read(db);
    else problems.push({ file, reason: `no ${tables.join(" / ")} tables: not ${what}` });
  } finally {
    db.close();
  }
}

function openReadOnly(file: string, problems: ImportProblem[]): Database.Database | undefined {
  try {
    const db = new (sqliteDatabase())(file, { readonly: true, fileMustExist: true });
    db.prepare("SELECT 1 FROM sqlite_master LIMIT 1").get();
    return db;
  } catch (error) {
    problems.push({ file, reason: `not a readable SQLite database: ${(error as Error).message}` });
    return undefined;
  }
}

export function hasTable(db: Database.Database, table: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
}

export function columnsOf(db: Database.Database, table: string): Set<string> {
  return new Set(
    (db.prepare(`PRAGMA table_info(${JSON.stringify(table)})`).all() as Array<{ name: string }>).map(
      (c) => c.name,
    ),
  );
}
