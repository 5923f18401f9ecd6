import type { InboxItem, InboxOutcome, InboxState } from "../../model/inbox.js";
import type { DriverInbox, InboxWrite, MaybePromise } from "../driver.js";
import { chain } from "../maybe-promise.js";
import { open, seal } from "./envelope.js";

/**
 * Inbox rows under encryption: an item's envelope (the message as received) and its outcome (the reply's
 * text) are sealed with the inbox key (derived from the configured key), bound to the item's id. The id,
 * key, dedupe key (a platform message id), state and times stay clear: the queue is run by them; so do the
 * envelope's channel and sender id (a key holds them too), by which erasure finds a person's rows.
 */
type Sealed = { sealed: string };

const isSealed = (value: unknown): value is Sealed =>
  typeof value === "object" && value !== null && typeof (value as Partial<Sealed>).sealed === "string";

export function sealInboxWrite(key: Buffer, write: InboxWrite): InboxWrite {
  if (write.kind === "end") {
    if (!write.outcome) return write;
    return { ...write, outcome: sealedOutcome(key, write.id, write.outcome) };
  }
  const envelopeJson = write.envelopeJson ?? JSON.stringify(write.item.envelope);
  // The channel and sender id stay clear, as the key does: erasure by subject finds a person's rows by them.
  const { channel, sender } = write.item.envelope;
  const envelope = {
    sealed: seal(key, envelopeJson, `inbox/${write.item.id}/envelope`),
    channel,
    sender: { id: sender?.id },
  };
  const item: InboxItem = { ...write.item, envelope: envelope as unknown as InboxItem["envelope"] };
  if (item.outcome) item.outcome = sealedOutcome(key, item.id, item.outcome);
  return { kind: "admit", item, envelopeJson: JSON.stringify(envelope) };
}

export function sealedOutcome(key: Buffer, id: string, outcome: InboxOutcome): InboxOutcome {
  return { sealed: seal(key, JSON.stringify(outcome), `inbox/${id}/outcome`) } as unknown as InboxOutcome;
}

/** The item with its envelope and outcome opened; one that does not open keeps an empty envelope. */
export function openInboxItem(key: Buffer, item: InboxItem): InboxItem {
  if (isSealed(item.envelope)) {
    const plain = open(key, item.envelope.sealed, `inbox/${item.id}/envelope`);
    item.envelope = (plain ? JSON.parse(plain.toString("utf8")) : {}) as InboxItem["envelope"];
  }
  if (isSealed(item.outcome)) {
    const plain = open(key, item.outcome.sealed, `inbox/${item.id}/outcome`);
    if (plain) item.outcome = JSON.parse(plain.toString("utf8")) as InboxOutcome;
    else item.outcome = { error: { code: "ENTRY_UNREADABLE", message: "the sealed outcome did not open" } };
  }
  return item;
}

/** A driver's inbox whose reads open what `sealInboxWrite` sealed. */
export class SealedInbox implements DriverInbox {
  readonly stateOf?: (id: string) => MaybePromise<InboxState | undefined>;

  constructor(
    private readonly inner: DriverInbox,
    private readonly key: Buffer,
  ) {
    if (inner.stateOf) this.stateOf = (id) => inner.stateOf!(id);
  }

  get(id: string): MaybePromise<InboxItem | undefined> {
    return chain(this.inner.get(id), (item) => item && openInboxItem(this.key, item));
  }

  byDedupeKey(dedupeKey: string): MaybePromise<InboxItem | undefined> {
    return chain(this.inner.byDedupeKey(dedupeKey), (item) => item && openInboxItem(this.key, item));
  }

  unfinished(): MaybePromise<InboxItem[]> {
    return chain(this.inner.unfinished(), (items) => items.map((item) => openInboxItem(this.key, item)));
  }

  prune(before: number): MaybePromise<number> {
    return this.inner.prune(before);
  }
}
