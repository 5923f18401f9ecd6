import { dirname, join } from "node:path";
import { makeDirSync } from "../../fs/make-dir.js";
import { SessiondError } from "../../model/errors.js";
import type {
  AdmitInput,
  AdmitResult,
  Inbox,
  InboxItem,
  InboxOutcome,
  InboxState,
} from "../../model/inbox.js";
import { MemoryInbox } from "../memory/inbox.js";
import { type FileSystem, fsyncDir, fsyncFailed, realFs, writeAll, writeFileAtomic } from "./durable-fs.js";

export interface JsonlInboxOptions {
  /** The store's `.sessiond/` folder; the inbox is `inbox.jsonl` in it. */
  dir: string;
  fs?: FileSystem;
}

/**
 * The inbox as an append-only file, one JSON line per change (the item as it now is; the last line of an
 * id wins), each fdatasync'd before its promise resolves. A torn last line (a crash mid-write) is cut off
 * on open; a complete line that does not parse is skipped and counted in `skipped`. Changes are written
 * one at a time, so an admission's dedupe check always sees the one before it.
 */
export class JsonlInbox implements Inbox {
  readonly backend = "jsonl";
  /** Complete lines that could not be read back at open. */
  readonly skipped: number;
  private readonly state = new MemoryInbox();
  private readonly path: string;
  private readonly fs: FileSystem;
  private fd: number;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(options: JsonlInboxOptions) {
    this.fs = options.fs ?? realFs;
    this.path = join(options.dir, "inbox.jsonl");
    makeDirSync(options.dir, this.fs);
    const created = !this.fs.existsSync(this.path);
    this.skipped = created ? 0 : this.replay();
    this.fd = this.fs.openSync(this.path, "a");
    if (created) fsyncDir(dirname(this.path), this.fs);
  }

  admit(input: AdmitInput): Promise<AdmitResult> {
    return this.serial(async () => {
      const planned = this.state.planAdmit(input);
      if (!planned.admitted) return planned;
      await this.write(planned.item);
      this.state.put(planned.item);
      return planned;
    });
  }

  transition(id: string, state: InboxState, at: number, outcome?: InboxOutcome): Promise<boolean> {
    return this.serial(async () => {
      if (!this.state.allows(id, state)) return false;
      const current = this.state.peek(id) as InboxItem;
      await this.write({ ...current, state, updatedAt: at, ...(outcome ? { outcome } : {}) });
      return this.state.transitionNow(id, state, at, outcome);
    });
  }

  get(id: string): Promise<InboxItem | undefined> {
    return this.serial(() => this.state.get(id));
  }

  unfinished(): Promise<InboxItem[]> {
    return this.serial(() => this.state.unfinished());
  }

  /** Forgets finished items, then rewrites the file with what is left (atomically: old or new file). */
  prune(before: number): Promise<number> {
    return this.serial(async () => {
      const pruned = this.state.pruneNow(before);
      if (pruned === 0) return 0;
      const lines = this.state.all().map((item) => `${JSON.stringify(item)}\n`);
      this.fs.closeSync(this.fd);
      writeFileAtomic(this.path, lines.join(""), true, this.fs);
      this.fd = this.fs.openSync(this.path, "a");
      return pruned;
    });
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const last = this.serial(async () => {
      this.fs.closeSync(this.fd);
      await this.state.close();
    });
    this.closed = true;
    return last;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new SessiondError("STORE_CLOSED", "the inbox is closed"));
    const next = this.chain.then(work);
    this.chain = next.catch(() => {});
    return next;
  }

  private async write(item: InboxItem): Promise<void> {
    writeAll(this.fd, Buffer.from(`${JSON.stringify(item)}\n`, "utf8"), undefined, this.fs);
    await new Promise<void>((resolve, reject) =>
      this.fs.fdatasync(this.fd, (error) => (error ? reject(fsyncFailed(this.path, error)) : resolve())),
    );
  }

  /** Rebuilds the state from the file, cutting a torn last line; returns how many lines were skipped. */
  private replay(): number {
    const bytes = this.fs.readFileSync(this.path);
    const end = bytes.lastIndexOf(0x0a) + 1;
    if (end < bytes.length) {
      const fd = this.fs.openSync(this.path, "r+");
      try {
        this.fs.ftruncateSync(fd, end);
        this.fs.fsyncSync(fd);
      } finally {
        this.fs.closeSync(fd);
      }
    }
    let skipped = 0;
    for (const line of bytes.subarray(0, end).toString("utf8").split("\n")) {
      if (line === "") continue;
      try {
        const item = JSON.parse(line) as InboxItem;
        if (typeof item.id !== "string" || typeof item.state !== "string") throw new Error("not an item");
        this.state.put(item);
      } catch {
        skipped++;
      }
    }
    return skipped;
  }
}
