import type { Entry, MessageEntry } from "../model/entry.js";

export interface Cut {
  /** The last entry summarised. */
  throughSeq: number;
  /** The first entry kept verbatim: always a user message. */
  firstKeptSeq: number;
  /** The entries summarised (from the context's start through `throughSeq`). */
  summarised: Entry[];
  kept: Entry[];
}

/**
 * Where to cut a context so that about `keepRecent` messages stay verbatim. The kept part starts at a
 * user message, so it never begins with an assistant reply cut off from its question, nor with a tool
 * result cut off from its call. The cut moves back (keeping more) to find one, and forward only when
 * there is none before it. Undefined when nothing can be summarised.
 */
export function chooseCut(entries: readonly Entry[], keepRecent: number): Cut | undefined {
  const messages = entries.filter((e): e is MessageEntry => e.type === "message" && e.role !== "system");
  if (messages.length <= keepRecent) return undefined;
  const target = messages.length - keepRecent;
  const isBoundary = (i: number) => messages[i]?.role === "user" && i > 0;
  let at = -1;
  for (let i = target; i > 0; i--) {
    if (isBoundary(i)) {
      at = i;
      break;
    }
  }
  if (at < 0) {
    for (let i = target + 1; i < messages.length; i++) {
      if (isBoundary(i)) {
        at = i;
        break;
      }
    }
  }
  const first = messages[at];
  if (!first) return undefined;
  const index = entries.indexOf(first);
  return {
    throughSeq: first.seq - 1,
    firstKeptSeq: first.seq,
    summarised: entries.slice(0, index),
    kept: entries.slice(index),
  };
}
