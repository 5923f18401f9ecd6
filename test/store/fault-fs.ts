// A file layer for the JSONL store that injects faults and simulates power cuts. It passes every call
// to node:fs and keeps a model of what is durable: a file's bytes as of its last fsync/fdatasync, a
// directory's names as of its last fsync (files and names that were there when the layer was made count
// as durable). `cutPower()` then makes the disk hold only that: every unsynced write, create, rename and
// removal is undone. fsyncs are not passed on: the model, not the disk, says what survives.
import * as fs from "node:fs";
import { join } from "node:path";
import type { FileSystem } from "../../src/store/jsonl/durable-fs.js";

export interface Faults {
  /** The process dies at this mutating call (1-based): it and every call after it fail. */
  cutAt?: number;
  /** `writeSync`/`writevSync` calls from this one (1-based) fail with ENOSPC… */
  enospcAtWrite?: number;
  /** …this many of them (default 1). */
  enospcWrites?: number;
  /** This fsync/fdatasync call (1-based) fails with EIO. */
  eioAtFsync?: number;
  /**
   * Files written outside the layer (the search index is SQLite's own I/O), by name: a power cut leaves
   * them as they are, as if every write to them had reached the disk.
   */
  untracked?: RegExp;
}

function errno(code: string, syscall: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: injected, ${syscall}`);
  error.code = code;
  error.syscall = syscall;
  return error;
}

export class FaultFs {
  /** Mutating calls so far (writes, fsyncs, creates, renames, removals, truncations, mkdirs). */
  mutations = 0;
  writes = 0;
  fsyncs = 0;
  /** Whether the simulated process has died (every call but close fails). */
  dead = false;
  readonly fs: FileSystem;
  private readonly durableBytes = new Map<number, Buffer>();
  private readonly durableNames = new Map<string, Map<string, number>>();

  constructor(
    private readonly root: string,
    public faults: Faults = {},
  ) {
    for (const dir of this.dirs()) {
      const names = new Map<string, number>();
      for (const name of this.filesIn(dir)) {
        const path = join(dir, name);
        const ino = fs.statSync(path).ino;
        names.set(name, ino);
        this.durableBytes.set(ino, fs.readFileSync(path));
      }
      this.durableNames.set(dir, names);
    }
    this.fs = this.layer();
  }

  /** The disk after a power cut now: only what was made durable. */
  cutPower(): void {
    this.dead = true;
    const tracked = (name: string) => !this.faults.untracked?.test(name);
    for (const dir of this.dirs()) {
      for (const name of this.filesIn(dir).filter(tracked)) fs.rmSync(join(dir, name));
      for (const [name, ino] of this.durableNames.get(dir) ?? [])
        if (tracked(name)) fs.writeFileSync(join(dir, name), this.durableBytes.get(ino) ?? Buffer.alloc(0));
    }
  }

  private dirs(): string[] {
    const out = [this.root];
    for (let i = 0; i < out.length; i++)
      for (const d of fs.readdirSync(out[i]!, { withFileTypes: true }))
        if (d.isDirectory()) out.push(join(out[i]!, d.name));
    return out;
  }

  private filesIn(dir: string): string[] {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => d.name);
  }

  /** Counts a mutating call; throws if the process is dead or dies at it. */
  private mutate(syscall: string): void {
    this.alive(syscall);
    this.mutations++;
    if (this.mutations === this.faults.cutAt) {
      this.dead = true;
      throw errno("EIO", `${syscall} (power cut)`);
    }
  }

  private alive(syscall: string): void {
    if (this.dead) throw errno("EIO", `${syscall} after the power cut`);
  }

  private write(syscall: string): void {
    this.mutate(syscall);
    this.writes++;
    const from = this.faults.enospcAtWrite;
    if (from !== undefined && this.writes >= from && this.writes < from + (this.faults.enospcWrites ?? 1))
      throw errno("ENOSPC", syscall);
  }

  /** Records what an fsync of `fd` makes durable, or throws the injected EIO. */
  private sync(fd: number, syscall: string): void {
    this.mutate(syscall);
    this.fsyncs++;
    if (this.fsyncs === this.faults.eioAtFsync) throw errno("EIO", syscall);
    const link = `/proc/self/fd/${fd}`;
    const stat = fs.fstatSync(fd);
    if (stat.isDirectory()) {
      const dir = fs.readlinkSync(link);
      const names = new Map<string, number>();
      for (const name of this.filesIn(dir)) names.set(name, fs.statSync(join(dir, name)).ino);
      this.durableNames.set(dir, names);
    } else {
      // Trailing zeros (a preallocated journal) are left out: they say nothing, and copying them costs.
      const bytes = fs.readFileSync(link);
      let end = bytes.length;
      while (end > 0 && bytes[end - 1] === 0) end--;
      this.durableBytes.set(stat.ino, bytes.subarray(0, end));
    }
  }

  private layer(): FileSystem {
    const creates = (flags: unknown) =>
      typeof flags === "number" ? (flags & fs.constants.O_CREAT) !== 0 : /^[wa]/.test(String(flags));
    const live = <T>(syscall: string, run: () => T): T => {
      this.alive(syscall);
      return run();
    };
    const mut = <T>(syscall: string, run: () => T): T => {
      this.mutate(syscall);
      return run();
    };
    const wrote = <T>(syscall: string, run: () => T): T => {
      this.write(syscall);
      return run();
    };
    const layer = {
      closeSync: (fd: number) => fs.closeSync(fd),
      existsSync: (path: fs.PathLike) => live("stat", () => fs.existsSync(path)),
      fdatasync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
        try {
          this.sync(fd, "fdatasync");
        } catch (error) {
          setImmediate(() => callback(error as NodeJS.ErrnoException));
          return;
        }
        setImmediate(() => callback(null));
      },
      fdatasyncSync: (fd: number) => this.sync(fd, "fdatasync"),
      fsyncSync: (fd: number) => this.sync(fd, "fsync"),
      fstatSync: (fd: number) => live("fstat", () => fs.fstatSync(fd)),
      ftruncateSync: (fd: number, length?: number) => mut("ftruncate", () => fs.ftruncateSync(fd, length)),
      mkdirSync: (path: fs.PathLike, options?: fs.MakeDirectoryOptions) =>
        mut("mkdir", () => fs.mkdirSync(path, options)),
      openSync: (path: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
        if (creates(flags)) this.mutate("open");
        else this.alive("open");
        return fs.openSync(path, flags ?? "r", mode);
      },
      readdirSync: (path: fs.PathLike, options?: unknown) =>
        live("readdir", () => fs.readdirSync(path, options as { withFileTypes: true })),
      readFileSync: (path: fs.PathOrFileDescriptor, options?: unknown) =>
        live("read", () => fs.readFileSync(path, options as { encoding: BufferEncoding })),
      readSync: (fd: number, buffer: NodeJS.ArrayBufferView, ...rest: unknown[]) =>
        live("read", () => (fs.readSync as (...args: unknown[]) => number)(fd, buffer, ...rest)),
      renameSync: (from: fs.PathLike, to: fs.PathLike) => mut("rename", () => fs.renameSync(from, to)),
      rmSync: (path: fs.PathLike, options?: fs.RmOptions) => mut("unlink", () => fs.rmSync(path, options)),
      statSync: (path: fs.PathLike) => live("stat", () => fs.statSync(path)),
      writeSync: (fd: number, buffer: NodeJS.ArrayBufferView | string, ...rest: unknown[]) =>
        wrote("write", () => (fs.writeSync as (...args: unknown[]) => number)(fd, buffer, ...rest)),
      writevSync: (fd: number, buffers: readonly NodeJS.ArrayBufferView[], position?: number) =>
        wrote("writev", () => fs.writevSync(fd, buffers, position)),
    };
    return layer as unknown as FileSystem;
  }
}
