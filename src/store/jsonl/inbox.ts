import { SessiondError } from "../../model/errors.js";
import {
  type AdmitInput,
  type AdmitResult,
  canTransition,
  type Inbox,
  type InboxItem,
  type InboxOutcome,
  type InboxState,
} from "../../model/inbox.js";
import { lazyEnvelope } from "../memory/inbox.js";
import { admitWrite } from "../store-inbox.js";
import { type FileSystem, realFs } from "./durable-fs.js";
import { InboxFile } from "./inbox-file.js";

export interface JsonlInboxOptions {
  /** The store's `.sessiond/` folder; the inbox is `inbox.jsonl` in it. */
  dir: string;
  fs?: FileSystem;
}

/**
 * The inbox file (inbox-file.ts) on its own, for an engine whose store is not this folder's `JsonlStore`:
 * each change fdatasync'd before its promise resolves, one at a time, so an admission's dedupe check always
 * sees the one before it. Beside a `JsonlStore`, `store.inbox()` writes the same file through the store's
 * writer instead.
 */
export class JsonlInbox implements Inbox {
  readonly backend = "jsonl";
  private readonly file: InboxFile;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(options: JsonlInboxOptions) {
    this.file = new InboxFile(options.dir, options.fs ?? realFs);
  }

  /** Complete lines that could not be read back at open. */
  get skipped(): number {
    return this.file.skipped;
  }

  admit(input: AdmitInput): Promise<AdmitResult> {
    return this.serial(async () => {
      const write = admitWrite(input);
      const known =
        write.item.dedupeKey === undefined ? undefined : this.file.byDedupeKey(write.item.dedupeKey);
      if (known) return { item: known, admitted: false };
      this.file.apply([write]);
      await this.file.syncAsync();
      return { item: lazyEnvelope(write.item, write.envelopeJson), admitted: true };
    });
  }

  transition(id: string, state: InboxState, at: number, outcome?: InboxOutcome): Promise<boolean> {
    return this.serial(async () => {
      const item = this.file.get(id);
      if (!item || !canTransition(item.state, state)) return false;
      this.file.apply([{ kind: "end", id, state, at, ...(outcome ? { outcome } : {}) }]);
      await this.file.syncAsync();
      return true;
    });
  }

  get(id: string): Promise<InboxItem | undefined> {
    return this.serial(async () => this.file.get(id));
  }

  unfinished(): Promise<InboxItem[]> {
    return this.serial(async () => this.file.unfinished());
  }

  prune(before: number): Promise<number> {
    return this.serial(async () => this.file.prune(before));
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const last = this.serial(async () => this.file.close());
    this.closed = true;
    return last;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new SessiondError("STORE_CLOSED", "the inbox is closed"));
    const next = this.chain.then(work);
    this.chain = next.catch(() => {});
    return next;
  }
}
