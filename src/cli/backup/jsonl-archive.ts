import { closeSync, createReadStream, existsSync, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { createGunzip } from "node:zlib";
import { readTar, type TarMember, type TarSink } from "../../fs/tar-read.js";
import { BACKUP_FORMAT, BACKUP_MANIFEST, type BackupManifest } from "../../store/jsonl/backup-stream.js";
import { isSessionFileName } from "../../store/jsonl/file-names.js";
import { META_DIR } from "../../store/jsonl/meta-dir.js";
import { CliError } from "../errors.js";

export interface ArchiveSummary {
  files: number;
  takenAt: string;
}

/**
 * Reads a JSONL backup (store/jsonl/backup-stream.ts) through, checking it is whole: every member a regular
 * file with a name a store holds, and the manifest last, counting them. With `into`, each file is written
 * there (created, never overwritten, and fsync'd). Throws a CliError naming the file when it is not one.
 */
export async function readBackup(file: string, into?: string): Promise<ArchiveSummary> {
  if (!existsSync(file)) throw new CliError(`no backup at ${file}`);
  let manifest: BackupManifest | undefined;
  let files = 0;
  const created = new Set<string>();
  const member = (m: TarMember): TarSink | undefined => {
    if (manifest) throw notABackup(file, "members follow its manifest");
    if (m.type === "5") return undefined;
    if (m.type !== "0") throw notABackup(file, `${m.name} is not a regular file (type ${m.type})`);
    if (m.name === BACKUP_MANIFEST) return manifestSink((parsed) => (manifest = parsed), file);
    if (!storeName(m.name)) throw notABackup(file, `${JSON.stringify(m.name)} is no file of a JSONL store`);
    files++;
    if (!into) return undefined;
    const path = join(into, m.name);
    if (!created.has(dirname(path))) {
      mkdirSync(dirname(path), { recursive: true });
      created.add(dirname(path));
    }
    // "wx": a name given twice is refused, never written over.
    const fd = openSync(path, "wx", (m.mode & 0o777) | 0o600);
    return {
      write: (bytes) => {
        for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
      },
      end: () => {
        fsyncSync(fd);
        closeSync(fd);
      },
    };
  };
  let ended: boolean;
  try {
    ({ ended } = await readTar(createReadStream(file).pipe(createGunzip()), member));
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw notABackup(file, error instanceof Error ? error.message : String(error));
  }
  if (!manifest || !ended) throw notABackup(file, "it is cut short (no manifest at its end)");
  const found: BackupManifest = manifest;
  if (found.files !== files)
    throw notABackup(file, `its manifest counts ${found.files} files, and it holds ${files}`);
  for (const dir of created) fsyncDirectory(dir);
  return { files, takenAt: found.takenAt };
}

/** A session file at the top, or a file under `.sessiond/`: no absolute path, no `..`, nothing empty. */
function storeName(name: string): boolean {
  const parts = name.split("/");
  if (parts.some((p) => p === "" || p === "." || p === ".." || p.includes("\\") || p.includes("\0")))
    return false;
  if (parts.length === 1) return isSessionFileName(name);
  return parts[0] === META_DIR;
}

function manifestSink(done: (manifest: BackupManifest) => void, file: string): TarSink {
  const parts: Buffer[] = [];
  let size = 0;
  return {
    write: (bytes) => {
      size += bytes.length;
      if (size > 64 * 1024) throw notABackup(file, "its manifest is too big");
      parts.push(Buffer.from(bytes));
    },
    end: () => {
      let parsed: Partial<BackupManifest>;
      try {
        parsed = JSON.parse(Buffer.concat(parts).toString("utf8")) as Partial<BackupManifest>;
      } catch {
        throw notABackup(file, "its manifest does not parse");
      }
      if (parsed.format !== BACKUP_FORMAT || parsed.version !== 1 || typeof parsed.files !== "number")
        throw notABackup(
          file,
          `its manifest is not one this sessiond reads (format ${String(parsed.format)})`,
        );
      done(parsed as BackupManifest);
    },
  };
}

function notABackup(file: string, reason: string): CliError {
  return new CliError(`${file} is not a whole sessiond JSONL backup: ${reason}`);
}

function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
