import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeDirSync } from "../fs/make-dir.js";
import { SessiondError } from "../model/errors.js";
import { type ExclusiveLock, tryExclusiveLock } from "../store/sqlite/exclusive-lock.js";

/** The lock file `sessiond serve` holds in its data dir, and the note beside it naming the holder. */
export const SERVE_LOCK = "serve.lock";
export const SERVE_HOLDER = "serve.json";

/** Who holds a data dir: written once the gateway listens. */
export interface ServeHolder {
  pid: number;
  url?: string;
  since: number;
}

export interface ServeLock {
  /** Why no lock could be taken (a data dir this process cannot write): it runs without one. */
  unlocked?: string;
  /** Names the running gateway's address, for the next `serve` that finds the lock taken. */
  listening(url: string): void;
  release(): void;
}

/**
 * One gateway per data dir: taken before the engine opens, so a second `serve` on a live data dir
 * stops before it reads, recovers or writes anything. CLI commands do not take it.
 */
export function lockDataDir(dataDir: string): ServeLock {
  let lock: ExclusiveLock | undefined;
  try {
    makeDirSync(dataDir);
    lock = tryExclusiveLock(join(dataDir, SERVE_LOCK));
  } catch (error) {
    // Nothing here can be written, by this gateway or another: the store falls back or fails on its own.
    const reason = error instanceof Error ? error.message : String(error);
    return { unlocked: reason, listening: () => {}, release: () => {} };
  }
  if (!lock) throw inUse(dataDir, readHolder(dataDir));
  const holderPath = join(dataDir, SERVE_HOLDER);
  const write = (holder: ServeHolder) => {
    const temp = `${holderPath}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(holder)}\n`, { mode: 0o600 });
    renameSync(temp, holderPath);
  };
  const since = Date.now();
  const note = (holder: ServeHolder) => {
    try {
      write(holder);
    } catch {
      // The note only names the holder in the next one's error; the lock itself holds without it.
    }
  };
  note({ pid: process.pid, since });
  return {
    listening: (url) => note({ pid: process.pid, url, since }),
    release: () => {
      rmSync(holderPath, { force: true });
      lock.release();
    },
  };
}

function readHolder(dataDir: string): ServeHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, SERVE_HOLDER), "utf8")) as Partial<ServeHolder>;
    if (typeof parsed.pid !== "number") return undefined;
    return {
      pid: parsed.pid,
      since: typeof parsed.since === "number" ? parsed.since : 0,
      ...(typeof parsed.url === "string" ? { url: parsed.url } : {}),
    };
  } catch {
    return undefined;
  }
}

function inUse(dataDir: string, holder: ServeHolder | undefined): SessiondError {
  const who = holder
    ? `PID ${holder.pid}${holder.url ? `, listening on ${holder.url}` : ", starting"}`
    : "another process";
  return new SessiondError(
    "DATA_DIR_IN_USE",
    `another sessiond gateway (${who}) is running on the data dir ${dataDir}; ` +
      "stop it first, or give this one its own data dir (--data-dir); nothing was read or changed",
    { details: { dataDir, ...(holder ? { holder } : {}) } },
  );
}
