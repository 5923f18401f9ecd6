import { SessiondError } from "../../model/errors.js";
import { newId } from "../../model/ids.js";
import {
  type AdmitInput,
  type AdmitResult,
  canTransition,
  type Inbox,
  type InboxItem,
  type InboxOutcome,
  type InboxState,
} from "../../model/inbox.js";
import { type ErasedSender, fromErasedSender } from "../scrub.js";

/**
 * The inbox in memory: nothing survives the process (tests, and the store's in-memory fallback). The JSONL
 * inbox keeps its state in one of these too, rebuilt from its file.
 */
export class MemoryInbox implements Inbox {
  readonly backend: string = "memory";
  /** Insertion order is admission order. */
  private readonly items = new Map<string, InboxItem>();
  private readonly byDedupe = new Map<string, string>();
  private closed = false;

  async admit(input: AdmitInput): Promise<AdmitResult> {
    this.open();
    return this.admitNow(input);
  }

  async transition(id: string, state: InboxState, at: number, outcome?: InboxOutcome): Promise<boolean> {
    this.open();
    return this.transitionNow(id, state, at, outcome);
  }

  async get(id: string): Promise<InboxItem | undefined> {
    this.open();
    const item = this.items.get(id);
    return item && structuredClone(item);
  }

  async unfinished(): Promise<InboxItem[]> {
    this.open();
    return [...this.items.values()]
      .filter((i) => i.state === "pending" || i.state === "running")
      .map((i) => structuredClone(i));
  }

  async prune(before: number): Promise<number> {
    this.open();
    return this.pruneNow(before);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Stores a copy of an item (replayed from a file). */
  put(item: InboxItem): void {
    this.adopt(structuredClone(item));
  }

  /**
   * Stores the item itself, no copy: one made for this inbox that nothing else holds (an admission's item,
   * its envelope read back from its JSON: a 1 MB input is not copied a second time).
   */
  adopt(item: InboxItem): void {
    this.items.set(item.id, item);
    if (item.dedupeKey !== undefined) this.byDedupe.set(item.dedupeKey, item.id);
  }

  /** The item admitted with this dedupe key (the stored item itself, no copy). */
  peekDedupe(dedupeKey: string): InboxItem | undefined {
    const id = this.byDedupe.get(dedupeKey);
    return id === undefined ? undefined : this.items.get(id);
  }

  /** The stored item itself (no copy), for the file-backed inbox built on this one. */
  peek(id: string): InboxItem | undefined {
    return this.items.get(id);
  }

  /** Every item, in admission order (copies). */
  all(): InboxItem[] {
    return [...this.items.values()].map((i) => structuredClone(i));
  }

  /** Whether `transition` would change anything. */
  allows(id: string, state: InboxState): boolean {
    const item = this.items.get(id);
    return item !== undefined && canTransition(item.state, state);
  }

  transitionNow(id: string, state: InboxState, at: number, outcome?: InboxOutcome): boolean {
    const item = this.items.get(id);
    if (!item || !canTransition(item.state, state)) return false;
    item.state = state;
    item.updatedAt = at;
    if (outcome) item.outcome = structuredClone(outcome);
    return true;
  }

  /** Erasure: forgets every item of these keys, whatever its state; how many went. */
  removeKeys(keys: ReadonlySet<string>, senders: readonly ErasedSender[] = []): number {
    let removed = 0;
    for (const [id, item] of this.items) {
      if (!keys.has(item.key) && !(senders.length > 0 && fromErasedSender(senders, item.envelope))) continue;
      this.items.delete(id);
      if (item.dedupeKey !== undefined) this.byDedupe.delete(item.dedupeKey);
      removed++;
    }
    return removed;
  }

  pruneNow(before: number): number {
    let pruned = 0;
    for (const [id, item] of this.items) {
      if (item.state === "pending" || item.state === "running" || item.updatedAt >= before) continue;
      this.items.delete(id);
      if (item.dedupeKey !== undefined) this.byDedupe.delete(item.dedupeKey);
      pruned++;
    }
    return pruned;
  }

  private admitNow(input: AdmitInput): AdmitResult {
    const known = input.dedupeKey === undefined ? undefined : this.byDedupe.get(input.dedupeKey);
    const existing = known === undefined ? undefined : this.items.get(known);
    if (existing) return { item: structuredClone(existing), admitted: false };
    // The stored item and the caller's each read the envelope back from its JSON, when first read.
    const envelopeJson = jsonText(input.envelope);
    const item = lazyEnvelope(pendingItem(input, undefined as never), envelopeJson);
    this.adopt(item);
    return { admitted: true, item: lazyEnvelope(item, envelopeJson) };
  }

  private open(): void {
    if (this.closed) throw new SessiondError("STORE_CLOSED", "the inbox is closed");
  }
}

/** A new admission's item: pending, its id given or made from its time. */
export function pendingItem(input: AdmitInput, envelope: InboxItem["envelope"]): InboxItem {
  return {
    id: input.id ?? newId(input.at),
    key: input.key,
    envelope,
    ...(input.dedupeKey !== undefined ? { dedupeKey: input.dedupeKey } : {}),
    state: "pending",
    admittedAt: input.at,
    updatedAt: input.at,
  };
}

/**
 * `item` with its envelope read from `envelopeJson` when first read, not before (then the JSON is let go):
 * an admission's stored item and the item its caller gets are each one of these, so neither is shared with
 * the other or with the caller's input, and a driver that stores the JSON (SQLite) never parses it. The
 * fields keep their order; `item.envelope` itself is not read.
 */
export function lazyEnvelope(item: InboxItem, envelopeJson: string): InboxItem {
  const lazy: Record<string, unknown> = {};
  let json: string | undefined = envelopeJson;
  let envelope: InboxItem["envelope"] | undefined;
  for (const name of Object.keys(item)) {
    if (name !== "envelope") {
      lazy[name] = (item as unknown as Record<string, unknown>)[name];
      continue;
    }
    Object.defineProperty(lazy, "envelope", {
      enumerable: true,
      configurable: true,
      get: () => {
        if (json !== undefined) {
          envelope = JSON.parse(json) as InboxItem["envelope"];
          json = undefined;
        }
        return envelope;
      },
      set: (value: InboxItem["envelope"]) => {
        envelope = value;
        json = undefined;
      },
    });
  }
  return lazy as unknown as InboxItem;
}

/** The JSON text an inbox stores for `value`; INVALID_ARGUMENT when it cannot be written as JSON. */
export function jsonText(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new SessiondError("INVALID_ARGUMENT", "the input cannot be stored: it is not JSON", {
      cause: error,
    });
  }
  if (text === undefined)
    throw new SessiondError("INVALID_ARGUMENT", "the input cannot be stored: it is not JSON");
  return text;
}
