import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import { pipeline, Readable } from "node:stream";
import { createGzip } from "node:zlib";
import { padding, TAR_END, type TarFile, tarHeader } from "../../fs/tar-write.js";
import type { SnapshotFile, StoreSnapshot } from "./store-snapshot.js";

/** The last member of a backup: written only once every file before it is, so a cut-short copy lacks it. */
export const BACKUP_MANIFEST = ".sessiond/backup.json";
export const BACKUP_FORMAT = "sessiond-jsonl-backup";

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: 1;
  /** When the snapshot was taken, ISO 8601. */
  takenAt: string;
  /** The members before this one. */
  files: number;
}

/** A store that can give its files at one instant (JsonlStore). */
export interface SnapshotSource {
  snapshot(): StoreSnapshot;
}

const CHUNK = 1024 * 1024;
/** How far back a torn last line is looked for at a time. */
const TAIL = 64 * 1024;

/**
 * A consistent copy of a JSONL store as a gzipped tar: the snapshot is taken when this is called (one
 * instant, store-snapshot.ts), then the bytes are read from its links at the caller's pace, one chunk at a
 * time. A line file's last line is cut off when it was not whole then (another process mid-append). The
 * SQLite files beside the store (runtime sessions) are copied with SQLite's backup API, each consistent
 * in itself. The snapshot is released when the stream ends, fails or is destroyed.
 */
export function jsonlBackupStream(store: SnapshotSource): { stream: Readable; takenAt: number } {
  const snapshot = store.snapshot();
  const members = tarMembers(snapshot);
  // A failure on either side destroys both; the snapshot goes with them.
  const stream = pipeline(Readable.from(members, { objectMode: false }), createGzip(), () =>
    snapshot.release(),
  );
  return { stream, takenAt: snapshot.takenAt };
}

async function* tarMembers(snapshot: StoreSnapshot): AsyncGenerator<Buffer> {
  try {
    let count = 0;
    for (const file of snapshot.files) {
      yield* member(file, file.name.endsWith(".jsonl"));
      count++;
    }
    for (const [i, db] of snapshot.databases.entries()) {
      const copy = join(snapshot.dir, `db-${i}`);
      const { sqliteDatabase } = await import("../sqlite/better-sqlite3.js");
      const source = new (sqliteDatabase())(db.path, { readonly: true, fileMustExist: true });
      try {
        await source.backup(copy);
      } finally {
        source.close();
      }
      yield* member({ name: db.name, link: copy, size: undefined }, false);
      count++;
    }
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: 1,
      takenAt: new Date(snapshot.takenAt).toISOString(),
      files: count,
    };
    const body = Buffer.from(`${JSON.stringify(manifest)}\n`);
    yield tarHeader({ name: BACKUP_MANIFEST, size: body.length, mode: 0o600, mtimeMs: snapshot.takenAt });
    yield body;
    yield padding(body.length);
    yield TAR_END;
  } finally {
    snapshot.release();
  }
}

async function* member(file: SnapshotFile, lines: boolean): AsyncGenerator<Buffer> {
  const handle = await open(file.link, "r");
  try {
    const info = await handle.stat();
    const length = file.size ?? info.size;
    const size = lines ? await wholeLines(handle, length) : length;
    const header: TarFile = { name: file.name, size, mode: info.mode & 0o777, mtimeMs: info.mtimeMs };
    yield tarHeader(header);
    for (let at = 0; at < size; ) {
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK, size - at));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
      // The link's inode only grows: fewer bytes than its length then means it was cut by hand.
      if (bytesRead === 0) throw new Error(`${file.name} got shorter while it was copied`);
      yield buffer.subarray(0, bytesRead);
      at += bytesRead;
    }
    yield padding(size);
  } finally {
    await handle.close();
  }
}

/** The length up to the end of the last whole line within the first `size` bytes. */
async function wholeLines(handle: FileHandle, size: number): Promise<number> {
  if (size === 0) return 0;
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  if (last[0] === 0x0a) return size;
  let end = size;
  while (end > 0) {
    const from = Math.max(0, end - TAIL);
    const buffer = Buffer.alloc(end - from);
    await handle.read(buffer, 0, buffer.length, from);
    const newline = buffer.lastIndexOf(0x0a);
    if (newline !== -1) return from + newline + 1;
    end = from;
  }
  return 0;
}
