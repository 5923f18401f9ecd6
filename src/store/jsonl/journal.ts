import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { dirname, join } from "node:path";
import { type FileSystem, fsyncDir, fsyncFailed, realFs, writeAll } from "./durable-fs.js";
import { frameHeader, recordHeader } from "./journal-format.js";
import { journalName, openJournals, selfOwner } from "./journal-owner.js";

/** The first stretch of a journal written ahead of its frames. */
const FIRST_PREALLOCATION = 1024 * 1024;
/** The most a journal grows by at once. */
const MAX_GROWTH = 16 * 1024 * 1024;
const ZEROS = Buffer.alloc(1024 * 1024);
/** The most bytes UTF-8 takes for one UTF-16 code unit. */
const MAX_UTF8_PER_UNIT = 3;

const HEADER_WITHOUT_NAME = recordHeader("", Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER).length;

/** The most bytes a record header for `file` takes (journal-format.ts): each character of the name escaped. */
function headerRoom(file: string): number {
  return HEADER_WITHOUT_NAME + 6 * file.length;
}

/**
 * The write-ahead journal that lets one fsync acknowledge a batch spread over many session files: each
 * batch's bytes for each file are written as one frame (journal-format.ts) and fsync'd, then written to
 * the session files without an fsync. A checkpoint fsyncs the session files and starts the journal over.
 * Opening a directory first replays the journals of writers that are gone (journal-replay.ts), so whatever
 * they acknowledged is in the session files even after a power cut. One journal per process.
 *
 * The file is written with zeros ahead of the frames and reused after a checkpoint: a frame then
 * overwrites bytes already on disk, which `fdatasync` makes durable without a metadata commit (an append
 * would need one for the file's new size), about half the cost of an fsync of an appended file.
 */
export class Journal {
  readonly path: string;
  private fd: number | undefined;
  /** Where the next frame goes: the bytes in use. */
  private position = 0;
  /** How much of the file is written (zeros past `position`). */
  private capacity = 0;
  /** Numbers the runs of frames between checkpoints: what follows the current run is stale. */
  private epoch = 1;
  /** Whether bytes were written since the last fdatasync. */
  private dirty = false;
  /** Where a frame's records are encoded before they are copied out as the frame's payload. */
  private scratch = Buffer.allocUnsafeSlow(64 * 1024);

  private readonly name: string;

  /** The journal is this process's from now on (journal-owner.ts): replays skip it until `close`. */
  constructor(
    dir: string,
    private readonly fs: FileSystem = realFs,
  ) {
    this.name = journalName(selfOwner(), randomBytes(4).toString("hex"));
    this.path = join(dir, this.name);
    openJournals.add(this.name);
  }

  get size(): number {
    return this.position;
  }

  /** Whether frames were written since the last fdatasync. */
  get needsSync(): boolean {
    return this.dirty;
  }

  /**
   * Writes the batch's records as one frame; returns each record's bytes (views of what was written),
   * which go to the session files as they are. `sync` or `syncAsync` makes them durable.
   */
  append(records: ReadonlyArray<{ file: string; offset: number; text: string }>): Buffer[] {
    if (records.length === 0) return [];
    let bound = 0;
    for (const r of records) bound += headerRoom(r.file) + r.text.length * MAX_UTF8_PER_UNIT;
    if (this.scratch.length < bound)
      this.scratch = Buffer.allocUnsafeSlow(Math.max(bound, 2 * this.scratch.length));
    const scratch = this.scratch;
    const spans: number[] = [];
    let at = 0;
    for (const r of records) {
      // Each text is encoded once, after room for its header, whose length field is only known then.
      const room = headerRoom(r.file);
      const length = scratch.write(r.text, at + room);
      const headerLength = scratch.write(recordHeader(r.file, r.offset, length), at);
      scratch.copyWithin(at + headerLength, at + room, at + room + length);
      spans.push(at + headerLength, length);
      at += headerLength + length;
    }
    const payload = Buffer.allocUnsafeSlow(at);
    scratch.copy(payload, 0, 0, at);
    this.writeFrame(frameHeader(this.epoch, payload), payload);
    const bytes: Buffer[] = [];
    for (let i = 0; i < spans.length; i += 2)
      bytes.push(payload.subarray(spans[i]!, spans[i]! + spans[i + 1]!));
    return bytes;
  }

  /** Everything written so far is on disk when this returns. */
  sync(): void {
    if (this.fd === undefined || !this.dirty) return;
    this.dirty = false;
    try {
      this.fs.fdatasyncSync(this.fd);
    } catch (error) {
      throw fsyncFailed("the journal", error);
    }
  }

  /** Resolves once everything written so far is on disk: the fdatasync runs off the event loop. */
  syncAsync(): Promise<void> {
    const fd = this.fd;
    if (fd === undefined || !this.dirty) return Promise.resolve();
    this.dirty = false;
    return new Promise((resolve, reject) =>
      this.fs.fdatasync(fd, (error) => (error ? reject(fsyncFailed("the journal", error)) : resolve())),
    );
  }

  /**
   * Call once the session files are fsync'd: what the journal holds is no longer needed. An empty frame
   * of the next epoch at the start makes the frames after it stale.
   */
  reset(): void {
    if (this.fd === undefined || this.position === 0) return;
    this.epoch++;
    this.position = 0;
    this.writeFrame(frameHeader(this.epoch, Buffer.alloc(0)));
    this.sync();
  }

  /**
   * Erasure: after a checkpoint (`reset`), the file is cut after the frame in use, so no stale frame of
   * an earlier run keeps erased bytes; it grows with zeros again as frames come.
   */
  shrink(): void {
    if (this.fd === undefined) return;
    this.fs.ftruncateSync(this.fd, this.position);
    this.capacity = this.position;
    this.fs.fsyncSync(this.fd);
  }

  /**
   * Releases the journal: removed once its contents are in the session files, else (`keep`: the store
   * failed) left for the next open to replay.
   */
  close(keep = false): void {
    try {
      if (this.fd !== undefined) this.fs.closeSync(this.fd);
      this.fd = undefined;
      if (!keep) this.fs.rmSync(this.path, { force: true });
    } finally {
      openJournals.delete(this.name);
    }
  }

  private writeFrame(header: Buffer, payload?: Buffer): void {
    const length = header.length + (payload?.length ?? 0);
    const fd = this.open();
    this.preallocate(this.position + length);
    const parts = payload ? [header, payload] : [header];
    const done = this.fs.writevSync(fd, parts, this.position);
    if (done < length) writeAll(fd, Buffer.concat(parts).subarray(done), this.position + done, this.fs);
    this.position += length;
    this.dirty = true;
  }

  private open(): number {
    if (this.fd === undefined) {
      this.fd = this.fs.openSync(this.path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC);
      fsyncDir(dirname(this.path), this.fs);
    }
    return this.fd;
  }

  /** Writes zeros up to at least `end`, so that frames overwrite bytes already in the file. */
  private preallocate(end: number): void {
    if (end <= this.capacity) return;
    const grown = Math.min(Math.max(this.capacity * 2, FIRST_PREALLOCATION), this.capacity + MAX_GROWTH);
    const target = Math.max(grown, end);
    while (this.capacity < target) {
      const length = Math.min(ZEROS.length, target - this.capacity);
      this.capacity += writeAll(this.fd!, ZEROS.subarray(0, length), this.capacity, this.fs);
    }
  }
}
