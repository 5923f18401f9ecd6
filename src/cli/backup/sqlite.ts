import { existsSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { sqliteDatabase } from "../../store/sqlite/better-sqlite3.js";
import { SCHEMA_VERSION } from "../../store/sqlite/schema.js";
import { CliError } from "../errors.js";

/** Where a backup or restore writes first, renamed into place only when whole. */
function partial(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
}

/**
 * A consistent copy of the database while the gateway writes to it: SQLite's online backup API, which
 * restarts a step when another connection changed a page it had copied. The copy is a single file.
 */
export async function backupSqlite(source: string, target: string): Promise<{ pages: number }> {
  if (!existsSync(source)) throw new CliError(`no database at ${source}: nothing to back up`);
  const db = new (sqliteDatabase())(source, { readonly: true, fileMustExist: true });
  const temp = partial(target);
  try {
    db.pragma("busy_timeout = 5000");
    const { totalPages } = await db.backup(temp);
    const copy = new (sqliteDatabase())(temp);
    // The copy stands alone: no WAL beside it.
    copy.pragma("journal_mode = DELETE");
    copy.close();
    renameSync(temp, target);
    return { pages: totalPages };
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  } finally {
    db.close();
  }
}

/** The schema version of a backup, after checking that it is a whole SQLite database sessiond can open. */
function checkedBackup(file: string): number {
  if (!existsSync(file)) throw new CliError(`no backup at ${file}`);
  let db: ReturnType<ReturnType<typeof sqliteDatabase>> | undefined;
  try {
    db = new (sqliteDatabase())(file, { readonly: true, fileMustExist: true });
    const check = db.pragma("quick_check", { simple: true });
    if (check !== "ok") throw new CliError(`${file} is damaged (quick_check: ${String(check)})`);
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new CliError(`${file} has schema ${version}, newer than this sessiond knows (${SCHEMA_VERSION})`);
    }
    return version;
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`${file} is not a sessiond SQLite backup (${(error as Error).message})`);
  } finally {
    db?.close();
  }
}

/**
 * Puts a backup in place of the database. What was there (with its -wal and -shm, which must never meet
 * another database) is moved aside, never deleted; the caller stops the gateway first.
 */
export async function restoreSqlite(backup: string, target: string, now: Date): Promise<{ aside?: string }> {
  checkedBackup(backup);
  const source = new (sqliteDatabase())(backup, { readonly: true, fileMustExist: true });
  const temp = partial(target);
  try {
    await source.backup(temp);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  } finally {
    source.close();
  }
  let aside: string | undefined;
  if (existsSync(target)) {
    aside = `${target}.before-restore-${now.toISOString().replace(/[:.]/g, "-")}`;
    for (const suffix of ["", "-wal", "-shm"]) {
      if (existsSync(target + suffix)) renameSync(target + suffix, aside + suffix);
    }
  }
  renameSync(temp, target);
  return aside === undefined ? {} : { aside };
}
