/**
 * The platform messages a gateway has taken, by dedupe id (channel, bot account, chat, message id), kept
 * for `SEEN_RETENTION_MS` whatever happens to the sessions: a redelivery after `/new`, a reset or a restart
 * is still a duplicate. Kept beside the store (its own SQLite file, or its own table in PostgreSQL), never
 * in a session.
 */
export interface SeenMessages {
  /** True when `id` was not taken within the retention (it is recorded now); false for a duplicate. */
  claim(id: string, at: number): Promise<boolean>;
  /** Forgets `id`: the message could not be taken after all (busy), so its redelivery must run. */
  forget(id: string): Promise<void>;
  close(): Promise<void>;
}

/** A week: longer than any platform redelivers (Slack, Meta and Telegram give up within a day). */
export const SEEN_RETENTION_MS = 7 * 24 * 3600_000;

/** How often expired ids are deleted (at most; on a claim). */
export const SEEN_PRUNE_EVERY_MS = 3600_000;
