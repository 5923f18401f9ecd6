/** What a store's scrub did: the bytes of erased sessions leave its files (erasure by subject). */
export interface ScrubReport {
  /** Inbox rows of the erased keys deleted (their envelopes hold the person's text). */
  inboxRows: number;
  /** Words dropped from the search vocabulary because no remaining message holds them. */
  searchTerms: number;
  /** How the freed bytes left the files, for the receipt (e.g. "vacuum+wal_checkpoint(TRUNCATE)"). */
  method: string;
}

/**
 * A store whose deleted data can linger in its files (freed pages, WAL frames, index segments) and that
 * can rewrite them without it. `keys` are the keys just erased: their inbox rows go too.
 */
export interface Scrubbable {
  scrub(keys: readonly string[]): Promise<ScrubReport>;
}

export function isScrubbable(store: object): store is Scrubbable {
  return typeof (store as Partial<Scrubbable>).scrub === "function";
}
