/** What a store's scrub did: the bytes of erased sessions leave its files (erasure by subject). */
export interface ScrubReport {
  /** Inbox rows of the erased keys deleted (their envelopes hold the person's text). */
  inboxRows: number;
  /** Words dropped from the search vocabulary because no remaining message holds them. */
  searchTerms: number;
  /** How the freed bytes left the files, for the receipt (e.g. "vacuum+wal_checkpoint(TRUNCATE)"). */
  method: string;
}

/** A sender whose inbox rows go wherever they were routed (lower case; `channel` "*" for any channel). */
export interface ErasedSender {
  channel: string;
  senderId: string;
}

/** Whether an inbox envelope is from one of `senders` (what the SQL of the SQLite and PostgreSQL scrubs say). */
export function fromErasedSender(
  senders: readonly ErasedSender[],
  envelope: { channel?: unknown; sender?: { id?: unknown } },
): boolean {
  const id = String(envelope.sender?.id ?? "").toLowerCase();
  const channel = String(envelope.channel ?? "").toLowerCase();
  return senders.some((s) => s.senderId === id && (s.channel === "*" || s.channel === channel));
}

/**
 * A store whose deleted data can linger in its files (freed pages, WAL frames, index segments) and that
 * can rewrite them without it. `keys` are the keys just erased: their inbox rows go too, as do the rows
 * of `senders`' messages routed to other keys (a group's).
 */
export interface Scrubbable {
  scrub(keys: readonly string[], senders?: readonly ErasedSender[]): Promise<ScrubReport>;
}

export function isScrubbable(store: object): store is Scrubbable {
  return typeof (store as Partial<Scrubbable>).scrub === "function";
}
