import { randomBytes } from "node:crypto";

/**
 * A share link as stored: it pins one session (generation) and the last seq it showed when it was made,
 * so later messages of the conversation never reach the link.
 */
export interface ShareLink {
  /** Over 143 random bits, base64url (24 characters): the only thing the link carries. */
  id: string;
  key: string;
  /** The generation shared. */
  sessionId: string;
  /** The session's last seq when the link was made: the view stops there. */
  headSeq: number;
  /** The session's title then, redacted. */
  title: string;
  createdAt: number;
}

/** One message of a shared conversation: text only, redacted. */
export interface SharedMessage {
  role: "user" | "assistant";
  content: string;
  ts: number;
}

/** What `/share/{id}` shows: the title and the user/assistant text up to the pinned seq, nothing else. */
export interface SharedConversation {
  title: string;
  sharedAt: number;
  messages: SharedMessage[];
  /** Earlier messages were left out to keep the page within its byte bound. */
  truncated: boolean;
}

const ID_BYTES = 18;
export const SHARE_ID_LENGTH = 24;
const SHARE_ID = /^[A-Za-z0-9_-]{24}$/;

/** Never starting with `-`, so a command line never reads an id as an option (1 in 64 drawn again). */
export function newShareId(): string {
  for (;;) {
    const id = randomBytes(ID_BYTES).toString("base64url");
    if (!id.startsWith("-")) return id;
  }
}

/** Whether `id` can be a share id at all: anything else is answered 404 without a read. */
export function isShareId(id: string): boolean {
  return id.length === SHARE_ID_LENGTH && SHARE_ID.test(id);
}
