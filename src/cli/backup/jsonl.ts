import {
  closeSync,
  createWriteStream,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { TOKEN_FILE } from "../../gateway/token.js";
import { tryExclusiveLock } from "../../store/sqlite/exclusive-lock.js";
import { CliError } from "../errors.js";
import { SERVE_HOLDER, SERVE_LOCK, type ServeHolder } from "../serve-lock.js";
import { type ArchiveSummary, readBackup } from "./jsonl-archive.js";

export interface JsonlBackupResult extends ArchiveSummary {
  /** The running gateway's address when it took the copy; absent when this process opened the store. */
  gateway?: string;
}

/** Where a backup or restore writes first, renamed into place only when whole. */
function partial(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
}

/**
 * A consistent copy of a JSONL store while it is written: only the process that writes the files can
 * name one instant of them, so a running gateway is asked for it (`GET /api/store/backup`, with its token:
 * SESSIOND_TOKEN or the data dir's token file); with none running, the store is opened here and gives it.
 * The copy is read back whole before it is renamed into place.
 */
export async function backupJsonl(
  store: string,
  dataDir: string,
  target: string,
  env: NodeJS.ProcessEnv,
): Promise<JsonlBackupResult> {
  const temp = partial(target);
  try {
    let gateway: string | undefined;
    if (gatewayRuns(dataDir)) {
      gateway = gatewayUrl(dataDir);
      await download(gateway, tokenOf(dataDir, env), temp);
    } else {
      if (!existsSync(store)) throw new CliError(`no JSONL store at ${store}: nothing to back up`);
      const { JsonlStore } = await import("../../store/jsonl/jsonl-store.js");
      const { jsonlBackupStream } = await import("../../store/jsonl/backup-stream.js");
      const opened = new JsonlStore({ path: store, searchIndex: false });
      try {
        await pipeline(
          jsonlBackupStream(opened).stream,
          createWriteStream(temp, { flags: "wx", mode: 0o600 }),
        );
      } finally {
        await opened.close();
      }
    }
    const summary = await readBackup(temp);
    const fd = openSync(temp, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, target);
    return gateway === undefined ? summary : { ...summary, gateway };
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Puts a backup in place of the store directory, which is moved aside (never deleted). The gateway must be
 * stopped: a running one would go on writing to the directory moved aside.
 */
export async function restoreJsonl(
  backup: string,
  store: string,
  dataDir: string,
  now: Date,
): Promise<ArchiveSummary & { aside?: string }> {
  if (gatewayRuns(dataDir))
    throw new CliError(
      `a gateway is running on ${dataDir}: stop it first, then restore (nothing was changed)`,
    );
  if (resolve(store) === resolve(dataDir))
    throw new CliError(
      `the JSONL store is the data dir itself (${store}): give it a directory of its own (store.path) to restore into`,
    );
  const temp = partial(store);
  rmSync(temp, { recursive: true, force: true });
  let summary: ArchiveSummary;
  try {
    summary = await readBackup(backup, temp);
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
  let aside: string | undefined;
  if (existsSync(store)) {
    aside = `${store}.before-restore-${now.toISOString().replace(/[:.]/g, "-")}`;
    renameSync(store, aside);
  }
  renameSync(temp, store);
  return aside === undefined ? summary : { ...summary, aside };
}

/** Whether a gateway holds the data dir's serve lock (serve-lock.ts). */
function gatewayRuns(dataDir: string): boolean {
  // No lock file: no gateway ever ran here (and none is made by asking).
  if (!existsSync(join(dataDir, SERVE_LOCK))) return false;
  const lock = tryExclusiveLock(join(dataDir, SERVE_LOCK));
  lock?.release();
  return lock === undefined;
}

function gatewayUrl(dataDir: string): string {
  let holder: Partial<ServeHolder> = {};
  try {
    holder = JSON.parse(readFileSync(join(dataDir, SERVE_HOLDER), "utf8")) as Partial<ServeHolder>;
  } catch {
    // Written once the gateway listens: told below.
  }
  if (typeof holder.url !== "string")
    throw new CliError(
      `the gateway on ${dataDir} is starting and names no address yet: try again in a moment`,
    );
  return holder.url;
}

function tokenOf(dataDir: string, env: NodeJS.ProcessEnv): string {
  const fromEnv = env.SESSIOND_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  try {
    const stored = readFileSync(join(dataDir, TOKEN_FILE), "utf8").trim();
    if (stored) return stored;
  } catch {
    // Told below.
  }
  throw new CliError(
    `the gateway on ${dataDir} takes the copy, and its token is needed: set SESSIOND_TOKEN to the gateway's token`,
  );
}

async function download(url: string, token: string, temp: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch(`${url}/api/store/backup`, { headers: { authorization: `Bearer ${token}` } });
  } catch (error) {
    throw new CliError(`the gateway at ${url} could not be reached: ${(error as Error).message}`);
  }
  if (!response.ok || !response.body) {
    const text = await response.text().catch(() => "");
    let message = text;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
    } catch {
      // Not the gateway's error shape: its text as it is.
    }
    throw new CliError(`the gateway at ${url} answered ${response.status}: ${message}`);
  }
  const body = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>);
  await pipeline(body, createWriteStream(temp, { flags: "wx", mode: 0o600 }));
}
