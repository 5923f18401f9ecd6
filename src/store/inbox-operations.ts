import type { AdmitResult, InboxItem, InboxOutcome, InboxState } from "../model/inbox.js";
import { canTransition } from "../model/inbox.js";
import type { DriverInbox, MaybePromise } from "./driver.js";
import type { BatchReads, BatchState, Operation, Planned } from "./log-batch.js";
import { chain } from "./maybe-promise.js";
import { lazyEnvelope } from "./memory/inbox.js";

/**
 * The inbox's writes as operations of the store's one writer, so that they share its transactions and
 * fsyncs with the appends (an admission and a turn's end in the same batch as other turns' entries).
 */

/** Stores a new item unless the batch or the store already has one with its dedupe key. */
export class AdmitOperation implements Operation<AdmitResult> {
  private found: InboxItem | undefined;

  constructor(
    private readonly inbox: DriverInbox,
    private readonly item: InboxItem,
    private readonly envelopeJson: string,
  ) {}

  prepare(_reads: BatchReads, _batch: BatchState): MaybePromise<void> {
    const { dedupeKey } = this.item;
    if (dedupeKey === undefined) return;
    return chain(this.inbox.byDedupeKey(dedupeKey), (found) => {
      this.found = found;
    });
  }

  plan(batch: BatchState): Planned<AdmitResult> {
    const { dedupeKey } = this.item;
    // One admitted earlier in this batch is the item its driver keeps: copied. `found` is a copy already.
    const inBatch = dedupeKey === undefined ? undefined : batch.inboxDedupe.get(dedupeKey);
    const existing = inBatch ? structuredClone(inBatch) : this.found && { ...this.found };
    if (existing) return { changes: [], expects: [], keys: [], result: { item: existing, admitted: false } };
    if (dedupeKey !== undefined) batch.inboxDedupe.set(dedupeKey, this.item);
    batch.inboxStates.set(this.item.id, this.item.state);
    return {
      changes: [],
      expects: [],
      keys: [],
      inbox: [{ kind: "admit", item: this.item, envelopeJson: this.envelopeJson }],
      // The driver keeps `this.item` itself (memory, JSONL): the caller's is another.
      result: { item: lazyEnvelope(this.item, this.envelopeJson), admitted: true },
    };
  }
}

/** Moves an item on when its stored state allows it; resolves with whether it did. */
export class TransitionOperation implements Operation<boolean> {
  constructor(
    private readonly inbox: DriverInbox,
    private readonly id: string,
    private readonly state: InboxState,
    private readonly at: number,
    private readonly outcome: InboxOutcome | undefined,
  ) {}

  prepare(_reads: BatchReads, batch: BatchState): MaybePromise<void> {
    if (batch.inboxStates.has(this.id)) return;
    // The state alone where the driver can tell it: the whole item is a copy of its (1 MB?) envelope.
    const state = this.inbox.stateOf
      ? this.inbox.stateOf(this.id)
      : chain(this.inbox.get(this.id), (item) => item?.state);
    return chain(state, (found) => {
      if (!batch.inboxStates.has(this.id)) batch.inboxStates.set(this.id, found);
    });
  }

  plan(batch: BatchState): Planned<boolean> {
    const state = batch.inboxStates.get(this.id);
    if (!state || !canTransition(state, this.state))
      return { changes: [], expects: [], keys: [], result: false };
    batch.inboxStates.set(this.id, this.state);
    const write = { kind: "end", id: this.id, state: this.state, at: this.at } as const;
    return {
      changes: [],
      expects: [],
      keys: [],
      inbox: [this.outcome ? { ...write, outcome: this.outcome } : write],
      result: true,
    };
  }
}
