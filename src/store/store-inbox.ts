import { SessiondError } from "../model/errors.js";
import type { AdmitInput, AdmitResult, Inbox, InboxItem, InboxOutcome, InboxState } from "../model/inbox.js";
import type { DriverInbox, InboxWrite, MaybePromise } from "./driver.js";
import type { GroupCommit } from "./group-commit.js";
import { AdmitOperation, TransitionOperation } from "./inbox-operations.js";
import type { Operation } from "./log-batch.js";
import { jsonText, lazyEnvelope, pendingItem } from "./memory/inbox.js";
import { SMALL_WRITE_BYTES } from "./write-bytes.js";

/**
 * The inbox a driver keeps in the store (`DriverInbox`), written by the store's own writer: an admission
 * shares its batch, transaction and fsync with other turns' appends, and a turn's end can commit with its
 * reply (`AppendOptions.inbox`). Closing it leaves the store open.
 */
export class StoreInbox implements Inbox {
  private closed = false;

  constructor(
    readonly backend: string,
    /** The store this inbox is kept in: its appends can carry this inbox's writes. */
    readonly store: object,
    private readonly inbox: DriverInbox,
    private readonly writer: GroupCommit<Operation>,
  ) {}

  admit(input: AdmitInput): Promise<AdmitResult> {
    let write: AdmitWrite;
    try {
      this.open();
      write = admitWrite(input);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.writer.submit(
      new AdmitOperation(this.inbox, write.item, write.envelopeJson),
      true,
      SMALL_WRITE_BYTES,
    );
  }

  /** Not made durable on its own: it rides on the next fsync (recovery settles a lost end from the entries). */
  transition(id: string, state: InboxState, at: number, outcome?: InboxOutcome): Promise<boolean> {
    if (this.closed) return Promise.reject(closedError());
    return this.writer.submit(
      new TransitionOperation(this.inbox, id, state, at, outcome),
      false,
      SMALL_WRITE_BYTES,
    );
  }

  get(id: string): Promise<InboxItem | undefined> {
    return this.afterWrites(() => this.inbox.get(id));
  }

  unfinished(): Promise<InboxItem[]> {
    return this.afterWrites(() => this.inbox.unfinished());
  }

  prune(before: number): Promise<number> {
    return this.afterWrites(() => this.inbox.prune(before));
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private async afterWrites<T>(read: () => MaybePromise<T>): Promise<T> {
    this.open();
    await this.writer.flush();
    return read();
  }

  private open(): void {
    if (this.closed) throw closedError();
  }
}

type AdmitWrite = Extract<InboxWrite, { kind: "admit" }> & { envelopeJson: string };

/** The write that admits `input` (pending); INVALID_ARGUMENT when its envelope cannot be stored as JSON. */
export function admitWrite(input: AdmitInput): AdmitWrite {
  const envelopeJson = jsonText(input.envelope);
  // Read back from its JSON (what a restart reads, shared with nothing) when first read: a driver that
  // stores the JSON (SQLite) never parses it.
  const item = lazyEnvelope(pendingItem(input, undefined as never), envelopeJson);
  return { kind: "admit", item, envelopeJson };
}

function closedError(): SessiondError {
  return new SessiondError("STORE_CLOSED", "the inbox is closed");
}
