import type { Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";
import { SearchBudget, type SearchOptions } from "./budget.js";
import { CJK, indexedText } from "./indexed-text.js";
import {
  encodeSearchCursor,
  type NormalisedSearch,
  type SearchHit,
  type SearchResult,
  type SearchRole,
} from "./query.js";
import { bm25Part, fold, foldedWords, idf, recencyScore } from "./rank.js";
import { makeSnippet } from "./snippet.js";

interface Doc {
  row: number;
  sessionId: string;
  seq: number;
  role: SearchRole;
  ts: number;
  text: string;
  /** The folded words, space-joined with spaces around (for phrases) and how many. */
  words: string;
  length: number;
}

/**
 * A search index in this process's memory, ranked as the SQLite one is (BM25, k1 1.2, b 0.75, negated so
 * that lower is better, times the recency weight): the memory store's, and what the JSONL store's sidecar
 * loads into. CJK terms are matched as substrings of the folded text.
 */
export class MemorySearchIndex {
  private readonly docs = new Map<number, Doc>();
  private readonly postings = new Map<string, Map<number, number>>();
  private readonly bySession = new Map<string, number[]>();
  private nextRow = 1;
  private totalLength = 0;
  /** Entries added but not split into words yet: a search takes them in first, the event loop let in. */
  private waiting: Array<Entry | undefined> = [];
  private taking: Promise<void> | undefined;

  constructor(private readonly sessionOf: (sessionId: string) => Session | undefined) {}

  get size(): number {
    return this.docs.size;
  }

  /** Takes entries in: they are split into words by the next search, not here (an append stays cheap). */
  add(entries: readonly Entry[]): void {
    for (const entry of entries) if (indexedText(entry)) this.waiting.push(entry);
  }

  /**
   * Splits the entries waiting into words, in the order they were added, letting the event loop in between
   * (one entry is one unit: a megabyte text ~45 ms). Searches at the same time wait for the same work.
   */
  private takeWaiting(): Promise<void> {
    this.taking ??= (async () => {
      const pace = new SearchBudget({ budgetMs: Number.POSITIVE_INFINITY });
      // Entries added meanwhile are pushed behind and taken in the same loop.
      for (let i = 0; i < this.waiting.length; i++) {
        const entry = this.waiting[i];
        // A session deleted since its entries were added is gone from the index too.
        if (entry && this.sessionOf(entry.sessionId)) this.index(entry);
        await pace.pace();
      }
      this.waiting = [];
    })().finally(() => {
      this.taking = undefined;
    });
    return this.taking;
  }

  private index(entry: Entry): void {
    const indexed = indexedText(entry);
    if (!indexed) return;
    const words = foldedWords(indexed.text);
    const row = this.nextRow++;
    const doc: Doc = {
      row,
      sessionId: entry.sessionId,
      seq: entry.seq,
      role: indexed.role,
      ts: entry.ts,
      text: indexed.text,
      words: ` ${words.join(" ")} `,
      length: words.length,
    };
    this.docs.set(row, doc);
    this.totalLength += words.length;
    for (const word of words) {
      let posting = this.postings.get(word);
      if (!posting) {
        posting = new Map();
        this.postings.set(word, posting);
      }
      posting.set(row, (posting.get(row) ?? 0) + 1);
    }
    const rows = this.bySession.get(entry.sessionId) ?? [];
    rows.push(row);
    this.bySession.set(entry.sessionId, rows);
  }

  remove(sessionId: string): void {
    // Same length, same places: a `takeWaiting` under way goes on by index (an erasure re-adds the session).
    if (this.waiting.some((e) => e?.sessionId === sessionId))
      this.waiting = this.waiting.map((e) => (e?.sessionId === sessionId ? undefined : e));
    for (const row of this.bySession.get(sessionId) ?? []) {
      const doc = this.docs.get(row);
      if (!doc) continue;
      this.docs.delete(row);
      this.totalLength -= doc.length;
      for (const word of new Set(doc.words.trim().split(" "))) {
        const posting = this.postings.get(word);
        posting?.delete(row);
        if (posting?.size === 0) this.postings.delete(word);
      }
    }
    this.bySession.delete(sessionId);
  }

  /**
   * Messages whose text matches, best first. Phrases and CJK terms are looked for in each message's text,
   * with the event loop let in between and within the search's budget: past it, the hits are those of the
   * messages read (`complete: false`).
   */
  async search(q: NormalisedSearch, options?: SearchOptions): Promise<SearchResult> {
    const budget = new SearchBudget(options);
    await this.takeWaiting();
    const scored: Array<{ doc: Doc; session: Session; score: number }> = [];
    const avg = this.docs.size === 0 ? 1 : this.totalLength / this.docs.size;
    for (const [row, rank] of await this.matches(q, avg, budget)) {
      const doc = this.docs.get(row);
      const session = doc && this.sessionOf(doc.sessionId);
      if (!doc || !session || !passes(q, doc, session)) continue;
      const score = recencyScore(rank, doc.ts, q.now);
      const after = q.after;
      if (after && !(score > after.score || (score === after.score && row > after.row))) continue;
      scored.push({ doc, session, score });
    }
    scored.sort((a, b) => a.score - b.score || a.doc.row - b.doc.row);
    const page = scored.slice(0, q.limit);
    const hits: SearchHit[] = [];
    for (const { doc, session } of page) {
      hits.push({
        key: session.key,
        sessionId: session.id,
        generation: session.generation,
        archived: session.state === "archived",
        seq: doc.seq,
        role: doc.role,
        ts: doc.ts,
        agent: session.agent,
        channel: session.channel,
        snippet: makeSnippet(doc.text, q.terms),
      });
      await budget.pace();
    }
    const result: SearchResult = { hits, indexing: false, complete: !budget.exhausted };
    const last = page.at(-1);
    if (scored.length > q.limit && last)
      result.nextCursor = encodeSearchCursor({ now: q.now, score: last.score, row: last.doc.row });
    return result;
  }

  /**
   * The rows every term matches, each with its (negated) BM25 over the word terms. Texts are read for
   * phrases and CJK terms only, within the budget (at least one is read).
   */
  private async matches(
    q: NormalisedSearch,
    avg: number,
    budget: SearchBudget,
  ): Promise<Map<number, number>> {
    let found: Map<number, number> | undefined;
    const n = this.docs.size;
    for (const [i, term] of q.terms.entries()) {
      const words = foldedWords(term.text);
      const here = new Map<number, number>();
      if (CJK.test(term.text) || term.phrase) {
        const needle = CJK.test(term.text) ? fold(term.text) : ` ${words.join(" ")} `;
        let read = 0;
        for (const doc of found ? [...found.keys()].map((r) => this.docs.get(r)) : [...this.docs.values()]) {
          // A session deleted while the search let the event loop run has no docs any more.
          if (!doc) continue;
          if (read++ > 0 && budget.spent()) break;
          const hay = CJK.test(term.text) ? fold(doc.text) : doc.words;
          if (hay.includes(needle)) here.set(doc.row, -1);
          await budget.pace();
        }
      } else {
        const prefix = i === q.terms.length - 1;
        const word = words[0] ?? "";
        for (const [token, posting] of this.postings) {
          if (token !== word && !(prefix && token.startsWith(word))) continue;
          const termIdf = idf(n, posting.size);
          for (const [row, tf] of posting) {
            const part = bm25Part(termIdf, tf, this.docs.get(row)?.length ?? 0, avg);
            here.set(row, (here.get(row) ?? 0) - part);
          }
        }
      }
      if (!found) found = here;
      else {
        const both = new Map<number, number>();
        for (const [row, rank] of here) {
          const before = found.get(row);
          if (before !== undefined) both.set(row, before + rank);
        }
        found = both;
      }
    }
    return found ?? new Map();
  }
}

function passes(q: NormalisedSearch, doc: Doc, s: Session): boolean {
  if (q.role && doc.role !== q.role) return false;
  if (q.since !== undefined && doc.ts < q.since) return false;
  if (q.until !== undefined && doc.ts >= q.until) return false;
  if (q.agent && s.agent !== q.agent) return false;
  if (q.channel && s.channel !== q.channel) return false;
  if (q.keyPrefix && !s.key.startsWith(q.keyPrefix)) return false;
  if (q.archived === "only" && s.state !== "archived") return false;
  if (q.archived === "exclude" && s.state === "archived") return false;
  return true;
}
