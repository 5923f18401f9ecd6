import type { Entry } from "../model/entry.js";
import { redactSecrets } from "../secrets/index.js";
import type { Store } from "../store/store.js";
import type { SharedConversation, SharedMessage, ShareLink } from "./share.js";

/** The most message text one share page holds; older messages past it are left out (`truncated`). */
export const SHARE_PAGE_BYTES = 1024 * 1024;
/** One message's text at most (the rest is cut, after redaction): a page always holds several. */
export const SHARE_MESSAGE_CHARS = 64 * 1024;
/** Entries read per page, and at most, walking back from the pinned seq. */
const READ_PAGE = 256;
const MAX_SCANNED = 20_000;

/**
 * What a share link shows, read from the store on every call: the user and assistant text of the pinned
 * session up to the pinned seq, newest kept first when the byte bound is reached, each redacted. Tool
 * calls and results, reasoning, notes, summaries, senders and attachments never appear. Undefined when the
 * session is gone.
 */
export async function sharedConversation(
  store: Store,
  link: ShareLink,
): Promise<SharedConversation | undefined> {
  if (!(await store.getSessionById(link.sessionId))) return undefined;
  const newestFirst: SharedMessage[] = [];
  let bytes = 0;
  let scanned = 0;
  let before = link.headSeq + 1;
  let truncated = false;
  while (before > 1 && !truncated) {
    const page = await store.readEntries(link.sessionId, {
      beforeSeq: before,
      order: "desc",
      limit: READ_PAGE,
    });
    if (page.length === 0) break;
    for (const entry of page) {
      before = entry.seq;
      scanned++;
      const message = shownMessage(entry);
      if (!message) continue;
      const size = Buffer.byteLength(message.content);
      if (bytes + size > SHARE_PAGE_BYTES) {
        truncated = true;
        break;
      }
      bytes += size;
      newestFirst.push(message);
    }
    if (scanned >= MAX_SCANNED && before > 1) truncated = true;
  }
  return { title: link.title, sharedAt: link.createdAt, messages: newestFirst.reverse(), truncated };
}

function shownMessage(entry: Entry): SharedMessage | undefined {
  if (entry.type !== "message" || entry.autoInjected) return undefined;
  if (entry.role !== "user" && entry.role !== "assistant") return undefined;
  if (entry.content.trim() === "") return undefined;
  // Redacted before the cut, on a bounded slice: a secret across the cut is redacted whole or cut away.
  let content = redactSecrets(entry.content.slice(0, 2 * SHARE_MESSAGE_CHARS));
  if (content.length > SHARE_MESSAGE_CHARS || entry.content.length > 2 * SHARE_MESSAGE_CHARS) {
    content = `${content.slice(0, SHARE_MESSAGE_CHARS)} […]`;
  }
  return { role: entry.role, content, ts: entry.ts };
}
