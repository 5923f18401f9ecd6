import type Database from "better-sqlite3";
import { sqliteDatabase } from "../../store/sqlite/better-sqlite3.js";
import { sizeText } from "../limits.js";
import type { SourceFiles, Where } from "../source-files.js";
import type { ImportProblem } from "../types.js";

/**
 * Runs `read` on another system's SQLite file, opened read-only, when it has the tables named; a file
 * that is not such a database is one reported problem.
 */
export function withDatabase(
  files: SourceFiles,
  file: string,
  tables: readonly string[],
  what: string,
  read: (db: Database.Database) => void,
): void {
  const { problems } = files;
  // SQLite reads pages as it needs them: the file has no size cap, its rows do (cappedText).
  const real = files.regularFile(file);
  if (!real) return;
  const db = openReadOnly(real, file, problems);
  if (!db) return;
  try {
    if (tables.every((t) => hasTable(db, t))) read(db);
    else problems.push({ file, reason: `no ${tables.join(" / ")} tables: not ${what}` });
  } finally {
    db.close();
  }
}

function openReadOnly(real: string, file: string, problems: ImportProblem[]): Database.Database | undefined {
  try {
    const db = new (sqliteDatabase())(real, { readonly: true, fileMustExist: true });
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

/**
 * A select column that yields a text or blob value only when it is at most `cap` bytes (NULL otherwise),
 * beside its size as `<column>_bytes`: an oversized row is never copied into JavaScript.
 */
export function cappedText(column: string, cap: number): string {
  const bytes = `length(CAST(${column} AS BLOB))`;
  return `CASE WHEN ${bytes} <= ${Math.floor(cap)} THEN ${column} END AS ${column}, ${bytes} AS ${column}_bytes`;
}

/** Whether a row's capped value came in; else one problem for the row, and its bytes counted. */
export function rowWithinCaps(files: SourceFiles, bytes: unknown, where: Where): boolean {
  const size = typeof bytes === "number" ? bytes : 0;
  if (size > files.limits.lineBytes) {
    files.problems.push({
      ...where,
      reason: `${sizeText(size)}, over the cap of ${sizeText(files.limits.lineBytes)} for one row; left out`,
    });
    return false;
  }
  return files.spend(size, where);
}
