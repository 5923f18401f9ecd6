import { closeSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import type Database from "better-sqlite3";
import { SQL } from "./sqlite-sql.js";

/**
 * `PRAGMA data_version` of one connection: it changes when any other connection committed since the
 * last look.
 */
export class DataVersion {
  private readonly query: Database.Statement;
  private last: number | undefined;

  /**
   * `unknown`: the first call says changed. A writer thread started after its store planned on what the
   * readers' connection saw must check its first batch: another process may have committed in between.
   */
  constructor(db: Database.Database, unknown = false) {
    this.query = db.prepare(SQL.dataVersion).pluck();
    this.last = unknown ? undefined : (this.query.get() as number);
  }

  /** Whether another connection committed since the last call. */
  changed(): boolean {
    const version = this.query.get() as number;
    if (version === this.last) return false;
    this.last = version;
    return true;
  }
}

const SEQ = 0;
const OWN_COMMITS = 1;
const SAW_FOREIGN = 2;

/**
 * What the writer thread tells the reading thread without a message, in shared memory: how many commits
 * it made that wrote to the file, a sequence that is odd while one of its transactions runs (so a reader
 * knows when that count and the file agree), and whether it saw another process's commit.
 */
export class WriterSignals {
  readonly buffer: SharedArrayBuffer;
  private readonly cells: Int32Array;

  constructor(buffer = new SharedArrayBuffer(12)) {
    this.buffer = buffer;
    this.cells = new Int32Array(buffer);
  }

  /** The writer: a transaction begins. */
  beginning(): void {
    Atomics.add(this.cells, SEQ, 1);
  }

  /** The writer: the transaction is over; `wrote`: it surely committed a change to the file. */
  ended(wrote: boolean): void {
    if (wrote) Atomics.add(this.cells, OWN_COMMITS, 1);
    Atomics.add(this.cells, SEQ, 1);
  }

  /** The writer: another process committed, seen at the start of a transaction. */
  sawForeign(): void {
    Atomics.store(this.cells, SAW_FOREIGN, 1);
  }

  get sequence(): number {
    return Atomics.load(this.cells, SEQ);
  }

  get ownCommits(): number {
    return Atomics.load(this.cells, OWN_COMMITS);
  }

  /** The reader: whether the writer saw another process's commit since the last call. */
  takeForeign(): boolean {
    return Atomics.exchange(this.cells, SAW_FOREIGN, 0) === 1;
  }
}

/**
 * Counts the commits to a WAL-mode database file by anyone, from the WAL index's header in its `-shm`
 * file: `iChange`, a 32-bit counter every commit that writes frames increments (sqlite.org/walformat.html,
 * native byte order, at offset 8 of each of the header's two copies).
 */
export class WalCommits {
  private fd: number | undefined;
  private readonly header = Buffer.alloc(96);
  private readonly little = endianness() === "LE";

  constructor(private readonly shmPath: string) {}

  /** The counter, or undefined when it cannot be read consistently (a writer is updating the header). */
  read(): number | undefined {
    try {
      this.fd ??= openSync(this.shmPath, "r");
      if (readSync(this.fd, this.header, 0, 96, 0) < 96) return undefined;
    } catch {
      return undefined;
    }
    const first = this.little ? this.header.readUInt32LE(8) : this.header.readUInt32BE(8);
    const second = this.little ? this.header.readUInt32LE(56) : this.header.readUInt32BE(56);
    return first === second ? first : undefined;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * Whether another process committed, seen from the reading thread of a store whose writes run on a writer
 * thread. Its own `data_version` changes with that thread's commits too, so it counts instead: commits to
 * the file (`WalCommits`) beyond those the writer made are another process's. The two counts agree only
 * while no transaction of the writer runs; meanwhile the writer itself notices another process's commit
 * when its next transaction begins (`WriterSignals.sawForeign`).
 */
export class ForeignCommits {
  /** Commits to the file not made by the writer, at the last consistent look. */
  private foreign: number | undefined;

  constructor(
    private readonly wal: WalCommits,
    private readonly signals: WriterSignals,
  ) {
    this.foreign = this.count();
  }

  changed(): boolean {
    let changed = this.signals.takeForeign();
    const now = this.count();
    if (now === undefined) return changed;
    if (this.foreign === undefined || now !== this.foreign) changed = true;
    this.foreign = now;
    return changed;
  }

  close(): void {
    this.wal.close();
  }

  private count(): number | undefined {
    const before = this.signals.sequence;
    if (before % 2 !== 0) return undefined;
    const own = this.signals.ownCommits;
    const all = this.wal.read();
    if (all === undefined || this.signals.sequence !== before) return undefined;
    return (all - own) | 0;
  }
}
