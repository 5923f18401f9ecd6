import { sqliteDatabase } from "./better-sqlite3.js";

/** An exclusive lock on a file, held until `release()` or the process ends (the kernel drops it then). */
export interface ExclusiveLock {
  release(): void;
}

/**
 * Takes SQLite's own exclusive lock on `path` (a small database of its own, created when missing), or
 * answers undefined at once when another connection holds it. The lock is the operating system's
 * (`fcntl` on POSIX, `LockFileEx` on Windows): it goes with the process that held it, so a SIGKILL or a
 * restart under the same PID never leaves a stale lock behind.
 */
export function tryExclusiveLock(path: string): ExclusiveLock | undefined {
  const Database = sqliteDatabase();
  const db = new Database(path, { timeout: 0 });
  try {
    db.pragma("journal_mode = OFF");
    // In exclusive locking mode, the lock a write transaction takes is kept after it commits.
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("CREATE TABLE IF NOT EXISTS held (at INTEGER)");
    db.exec("DELETE FROM held");
    db.prepare("INSERT INTO held (at) VALUES (?)").run(Date.now());
    db.exec("COMMIT");
  } catch (error) {
    db.close();
    if (isBusy(error)) return undefined;
    throw error;
  }
  return { release: () => db.close() };
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED";
}
