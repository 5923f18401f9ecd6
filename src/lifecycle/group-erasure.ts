import type { CompactionEntry, Entry, EntryBody } from "../model/entry.js";
import type { Session } from "../model/session.js";
import { type EntryErasure, isEntryErasing } from "../store/entry-erasure.js";
import { type ErasedSender, fromErasedSender } from "../store/scrub.js";
import type { Store } from "../store/store.js";

/** What an erased entry becomes: a note at the same seq, so the log stays gap-free and says why. */
export const ERASED_NOTE: EntryBody = {
  type: "note",
  code: "ERASED",
  level: "info",
  text: "erased: a message of a person whose data was erased (sessiond forget --subject)",
};

/** The summary of a compaction that covered an erased message (the session compacts anew later). */
export const ERASED_SUMMARY = "(summary erased: it covered a message of a person whose data was erased)";

/** What `eraseGroupMessages` rewrote, for the receipt. */
export interface GroupErasure {
  /** Sessions (any key but the person's own, every generation and fork) that held their messages. */
  sessions: number;
  /** Their messages, and the replies that answered them, now `ERASED` notes. */
  messages: number;
  /** Compaction summaries that covered one of them. */
  summaries: number;
  /** Sessions whose title was cleared (it may have been made from one of them). */
  titles: number;
}

const PAGE = 1000;

type IsTheirs = (channel: string, senderId: string) => boolean;

/**
 * Which senders are the person's: each account `<channel>:…:<id>` names the sender id `<id>` on
 * `<channel>` (`telegram:42`, `discord:dm:7`, `slack:T1:U2`); `direct:<id>` names it on every channel.
 */
export function erasedSenders(accounts: readonly string[]): ErasedSender[] {
  const senders = new Map<string, ErasedSender>();
  for (const account of accounts) {
    const parts = account.toLowerCase().split(":");
    if (parts.length < 2) continue;
    const sender = { channel: parts[0] === "direct" ? "*" : parts[0]!, senderId: parts.at(-1)! };
    senders.set(`${sender.channel}\n${sender.senderId}`, sender);
  }
  return [...senders.values()];
}

/**
 * Erases a person's messages from the sessions of other keys (groups, channels, a shared `main` DM
 * session): every user message whose sender is one of their accounts on the session's channel, the
 * replies that answered it, the summaries of compactions that covered it, and the session's titles.
 * Reads every session once (an operator command, O(size of the store)); every rewrite is planned before
 * the first is made, so a fork read after its origin was rewritten still sees what it inherited.
 * `messageIds` gathers the platform message ids of the erased messages (the tombstone refuses them).
 */
export async function eraseGroupMessages(
  store: Store,
  senders: readonly ErasedSender[],
  messageIds: Set<string>,
): Promise<GroupErasure> {
  const result: GroupErasure = { sessions: 0, messages: 0, summaries: 0, titles: 0 };
  if (!isEntryErasing(store) || senders.length === 0) return result;
  const isTheirs: IsTheirs = (channel, senderId) =>
    fromErasedSender(senders, { channel, sender: { id: senderId } });
  const plans = new Map<string, EntryErasure>();
  for (const state of ["active", "archived"] as const) {
    let after: { time: number; id: string } | undefined;
    for (;;) {
      const page = await store.scanSessions({ state, limit: PAGE, ...(after ? { after } : {}) });
      for (const session of page) {
        const plan = await planSession(store, session, isTheirs, messageIds, result);
        if (plan) plans.set(session.id, plan);
      }
      const last = page.at(-1);
      if (!last || page.length < PAGE) break;
      after = { time: state === "archived" ? (last.archivedAt ?? 0) : last.lastActivityAt, id: last.id };
    }
  }
  for (const [sessionId, plan] of plans) await store.eraseEntries(sessionId, plan);
  result.sessions = plans.size;
  return result;
}

async function planSession(
  store: Store,
  session: Session,
  isTheirs: IsTheirs,
  messageIds: Set<string>,
  counts: GroupErasure,
): Promise<EntryErasure | undefined> {
  const ownFrom = (session.forkedFrom?.seq ?? 0) + 1;
  const erasedIds = new Set<string>();
  const erasedSeqs: number[] = [];
  const bodies = new Map<number, EntryBody>();
  const compactions: CompactionEntry[] = [];
  const titles: number[] = [];
  let afterSeq = 0;
  for (;;) {
    const entries = await store.readEntries(session.id, { afterSeq, limit: PAGE });
    for (const entry of entries) {
      if (erased(entry, session.channel, isTheirs, erasedIds)) {
        erasedIds.add(entry.id);
        erasedSeqs.push(entry.seq);
        if (entry.type === "message" && entry.role === "user" && entry.idempotencyKey)
          messageIds.add(entry.idempotencyKey);
        if (entry.seq >= ownFrom) {
          bodies.set(entry.seq, ERASED_NOTE);
          counts.messages++;
        }
      } else if (entry.seq >= ownFrom && entry.type === "compaction") compactions.push(entry);
      else if (entry.seq >= ownFrom && entry.type === "title") titles.push(entry.seq);
    }
    if (entries.length < PAGE) break;
    afterSeq = entries.at(-1)!.seq;
  }
  if (erasedSeqs.length === 0) return undefined;
  for (const compaction of compactions) {
    if (!erasedSeqs.some((seq) => seq >= compaction.fromSeq && seq <= compaction.throughSeq)) continue;
    const { id: _i, sessionId: _s, seq, ts: _t, idempotencyKey: _k, ...body } = compaction;
    bodies.set(seq, { ...body, summary: ERASED_SUMMARY });
    counts.summaries++;
  }
  for (const seq of titles) bodies.set(seq, ERASED_NOTE);
  if (session.title !== "" || titles.length > 0) counts.titles++;
  return { bodies, title: "" };
}

/** Theirs (a user message they sent on the session's channel), or a reply or turn note of one that is. */
function erased(entry: Entry, channel: string, isTheirs: IsTheirs, erasedIds: ReadonlySet<string>): boolean {
  if (entry.type === "message") {
    if (entry.role === "user") return entry.sender !== undefined && isTheirs(channel, entry.sender.id);
    return entry.replyTo !== undefined && erasedIds.has(entry.replyTo);
  }
  if (entry.type !== "note" || entry.idempotencyKey === undefined) return false;
  const turnOf = /^turn:([^:]+):/.exec(entry.idempotencyKey)?.[1];
  return turnOf !== undefined && erasedIds.has(turnOf);
}
