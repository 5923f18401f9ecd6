import type { Entry } from "../model/entry.js";
import type { InboxItem } from "../model/inbox.js";
import type { Session } from "../model/session.js";
import type { Store } from "../store/store.js";
import { inputKeyOf } from "./admission.js";

/** What start-up does with one input its inbox still has unfinished. */
export type Recovery =
  /** Its user entry was never stored: it runs now, in admission order. */
  | { item: InboxItem; action: "run" }
  /** Its turn stored a reply before the crash, only the inbox did not hear of it. */
  | { item: InboxItem; action: "done"; sessionId: string; replyId: string }
  /**
   * Not run: its turn was cut off by the crash (`input`: its user entry is stored, no reply), or it waited
   * longer than the configured age (`input` undefined).
   */
  | { item: InboxItem; action: "interrupted"; input?: Entry; ageMs?: number };

const PAGE = 100;

/**
 * Decides, per unfinished item, from what the session holds: an input whose user entry is already stored
 * never runs again (the crash came after it was handed to its turn), so nothing is replayed twice.
 */
export async function planRecovery(
  store: Store,
  items: InboxItem[],
  now: number,
  maxAgeMs: number,
): Promise<Recovery[]> {
  const plans: Recovery[] = [];
  const recovered = new Set(items.map(inputKeyOf));
  for (const item of items) {
    const found = await findInput(store, item, recovered);
    if (found?.reply) {
      plans.push({ item, action: "done", sessionId: found.input.sessionId, replyId: found.reply.id });
    } else if (found) {
      plans.push({ item, action: "interrupted", input: found.input });
    } else if (now - item.admittedAt > maxAgeMs) {
      plans.push({ item, action: "interrupted", ageMs: now - item.admittedAt });
    } else {
      plans.push({ item, action: "run" });
    }
  }
  return plans;
}

/**
 * The item's user entry in any generation of its key active since its admission, newest first: a reset
 * after its turn stored it (a client history that did not continue, a `/new`) leaves it in an archived
 * generation, and it must not run again in the new one.
 */
async function findInput(
  store: Store,
  item: InboxItem,
  recovered: ReadonlySet<string>,
): Promise<{ input: Entry; reply?: Entry } | undefined> {
  for (const session of await store.generations(item.key)) {
    if (Math.max(session.lastActivityAt, session.archivedAt ?? 0) < item.admittedAt) break;
    const found = await findInSession(store, session, item, recovered);
    if (found) return found;
  }
  return undefined;
}

/**
 * The item's user entry in one generation of its key, and the first assistant reply after it (a partial
 * reply kept by an interruption does not count): read newest first, no further back than its admission.
 * A reply counts only if its turn took this input: its own, or one whose input (the turn's last user entry)
 * is also being recovered, as the inputs a turn collected or was steered by are. A reply of a turn another
 * gateway ran later on the key, after this input's turn was cut off, is not this input's.
 */
async function findInSession(
  store: Store,
  session: Session,
  item: InboxItem,
  recovered: ReadonlySet<string>,
): Promise<{ input: Entry; reply?: Entry } | undefined> {
  const key = inputKeyOf(item);
  let reply: Entry | undefined;
  /** The idempotency keys of the user entries after this input, by entry id. */
  const inputsAfter = new Map<string, string | undefined>();
  let beforeSeq: number | undefined;
  for (;;) {
    const page = await store.readEntries(session.id, {
      order: "desc",
      limit: PAGE,
      ...(beforeSeq === undefined ? {} : { beforeSeq }),
    });
    for (const entry of page) {
      if (entry.idempotencyKey === key) {
        const ours = reply && replyTakes(reply, entry, inputsAfter, recovered);
        return { input: entry, ...(ours ? { reply } : {}) };
      }
      if (entry.ts < item.admittedAt) return undefined;
      if (isReply(entry)) reply = entry;
      else if (entry.type === "message" && entry.role === "user")
        inputsAfter.set(entry.id, entry.idempotencyKey);
    }
    const last = page.at(-1);
    if (page.length < PAGE || !last) return undefined;
    beforeSeq = last.seq;
  }
}

/** Whether `reply` answered the turn that took `input` (see findInput). */
function replyTakes(
  reply: Entry,
  input: Entry,
  inputsAfter: ReadonlyMap<string, string | undefined>,
  recovered: ReadonlySet<string>,
): boolean {
  const turnInput = /^turn:(.+):reply$/.exec(reply.idempotencyKey ?? "")?.[1];
  // A reply stored without the pipeline's key (an older sessiond): the first reply after the input, as before.
  if (turnInput === undefined || turnInput === input.id) return true;
  if (!inputsAfter.has(turnInput)) return true;
  const turnInputKey = inputsAfter.get(turnInput);
  return turnInputKey !== undefined && recovered.has(turnInputKey);
}

function isReply(entry: Entry): boolean {
  return (
    entry.type === "message" && entry.role === "assistant" && !entry.idempotencyKey?.endsWith(":partial")
  );
}
