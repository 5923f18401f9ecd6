import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Compactor } from "../../src/compaction/compactor.js";
import { DEFAULT_COMPACTION } from "../../src/compaction/policy.js";
import { compactionThread } from "../../src/compaction/thread.js";
import type { EntryInput } from "../../src/model/entry.js";
import type { Summarizer, SummaryRequest } from "../../src/model/summarizer.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const init = { agent: "main", channel: "t", createdBy: "u" };
const policy = { ...DEFAULT_COMPACTION, maxMessages: 10, keepRecent: 4, retryAfterMs: 1000 };

/** A summariser scripted by the test: it answers what `answer` returns and records each request. */
class ScriptedSummarizer implements Summarizer {
  readonly name = "scripted";
  readonly model = "script-1";
  readonly requests: SummaryRequest[] = [];
  constructor(public answer: (request: SummaryRequest) => Promise<string> | string) {}
  async summarize(request: SummaryRequest) {
    this.requests.push(request);
    return { summary: await this.answer(request), model: this.model };
  }
}

describe("Compactor", () => {
  let dir: string;
  let store: SqliteStore;
  let clock: number;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-compactor-"));
    store = new SqliteStore({ path: join(dir, "s.db") });
    clock = 1_000_000;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const exchange = async (key: string, n: number, from = 0) => {
    const entries: EntryInput[] = [];
    for (let i = from; i < from + n; i++) {
      entries.push({ type: "message", role: "user", content: `question ${i} about ticket ABC-${100 + i}` });
      entries.push({ type: "message", role: "assistant", content: `answer ${i}` });
    }
    await store.append(key, entries, { init });
  };
  const compactor = (s: Summarizer) =>
    new Compactor(
      s,
      (key, entries, options) => store.append(key, entries, options),
      () => clock,
    );
  const context = async (key: string) => (await store.loadContext(key))!;

  it("does nothing below the thresholds", async () => {
    await exchange("k", 5);
    const summarizer = new ScriptedSummarizer(() => "never");
    expect(
      await compactor(summarizer).maybeCompact({ key: "k", context: await context("k"), policy }),
    ).toBeUndefined();
    expect(summarizer.requests).toHaveLength(0);
  });

  it("records a compaction entry and loads only the kept part afterwards, archive intact", async () => {
    await exchange("k", 6);
    const summarizer = new ScriptedSummarizer((r) => `Summary. ${r.identifiers.join(" ")}`);
    const outcome = (await compactor(summarizer).maybeCompact({
      key: "k",
      context: await context("k"),
      policy,
    }))!;
    expect(outcome.reason).toBe("messages");
    expect(outcome.entry).toMatchObject({
      type: "compaction",
      fromSeq: 1,
      throughSeq: 8,
      firstKeptSeq: 9,
      summarizer: "scripted",
      model: "script-1",
      seq: 13,
    });
    expect(outcome.entry.tokensAfter).toBeLessThan(outcome.entry.tokensBefore);
    const request = summarizer.requests[0]!;
    expect(request.maxChars).toBe(2000);
    expect(request.transcript.split("\n")).toHaveLength(8);
    expect(request.identifiers).toEqual(expect.arrayContaining(["ABC-100", "ABC-103"]));
    expect(request.identifiers).not.toContain("ABC-104");

    const after = await context("k");
    expect(after.summary?.seq).toBe(13);
    expect(after.entries.map((e) => e.seq)).toEqual([9, 10, 11, 12]);
    expect((await store.readEntries(after.session.id)).length).toBe(13);
  });

  it("folds the previous summary into the next one", async () => {
    await exchange("k", 6);
    let calls = 0;
    const summarizer = new ScriptedSummarizer((r) => `S${++calls} ${r.identifiers.join(" ")}`);
    const c = compactor(summarizer);
    await c.maybeCompact({ key: "k", context: await context("k"), policy });
    await exchange("k", 5, 6);
    await c.maybeCompact({ key: "k", context: await context("k"), policy });
    const second = summarizer.requests[1]!;
    expect(second.previousSummary).toMatch(/^S1 /);
    expect(second.transcript.startsWith("EARLIER SUMMARY: S1")).toBe(true);
    expect(second.identifiers).toEqual(expect.arrayContaining(["ABC-100", "ABC-108"]));
    const after = await context("k");
    expect(after.summary?.summary).toMatch(/^S2 /);
  });

  const failures: Array<[string, (r: SummaryRequest) => Promise<string> | string, RegExp]> = [
    ["an error", () => Promise.reject(new Error("503 from the model")), /503 from the model/],
    ["an empty summary", () => "   ", /empty/],
    [
      "a summary that drops identifiers",
      () => "A fine summary without any ids.",
      /dropped identifiers: ABC-/,
    ],
  ];
  for (const [what, answer, reason] of failures) {
    it(`leaves the history untouched after ${what}, notes why, and backs off`, async () => {
      await exchange("k", 6);
      const before = await context("k");
      const summarizer = new ScriptedSummarizer(answer);
      const c = compactor(summarizer);
      expect(await c.maybeCompact({ key: "k", context: before, policy })).toBeUndefined();
      const after = await context("k");
      expect(after.summary).toBeUndefined();
      expect(after.session.contextFromSeq).toBe(1);
      const note = after.entries.at(-1)!;
      expect(note).toMatchObject({ type: "note", code: "COMPACTION_FAILED" });
      expect(note.type === "note" && note.text).toMatch(reason);
      expect(note.type === "note" && note.text).toContain("The history is unchanged.");
      expect(after.session.state).toBe("active");
      expect(after.session.generation).toBe(1);

      // Within the backoff nothing is tried; after it, it is.
      await c.maybeCompact({ key: "k", context: await context("k"), policy });
      expect(summarizer.requests).toHaveLength(1);
      clock += 1001;
      summarizer.answer = (r) => `Recovered. ${r.identifiers.join(" ")}`;
      const outcome = await c.maybeCompact({ key: "k", context: await context("k"), policy });
      expect(outcome?.entry.summary).toMatch(/^Recovered/);
    });
  }

  it("remembers the backoff of a bounded number of keys, the least recently failed evicted first", async () => {
    const summarizer = new ScriptedSummarizer(() => "   ");
    const c = new Compactor(
      summarizer,
      (key, entries) => store.append(key, entries),
      () => clock,
      undefined,
      2,
    );
    for (const key of ["k1", "k2", "k3"]) {
      await exchange(key, 6);
      await c.maybeCompact({ key, context: await context(key), policy });
    }
    expect(summarizer.requests).toHaveLength(3);
    // k2 is still backing off; k1's backoff was evicted, so it is tried again at once.
    await c.maybeCompact({ key: "k2", context: await context("k2"), policy });
    expect(summarizer.requests).toHaveLength(3);
    await c.maybeCompact({ key: "k1", context: await context("k1"), policy });
    expect(summarizer.requests).toHaveLength(4);
  });

  it("cuts a summary over the cap at a sentence boundary and labels it, instead of refusing it", async () => {
    await exchange("k", 6);
    const sentence = "The user asked about the ticket and the agent explained the plan in detail. ";
    const summarizer = new ScriptedSummarizer((r) => `${r.identifiers.join(" ")}. ${sentence.repeat(60)}`);
    const outcome = await compactor(summarizer).maybeCompact({
      key: "k",
      context: await context("k"),
      policy,
    });
    const summary = outcome!.entry.summary;
    expect(summary.length).toBeLessThanOrEqual(policy.summaryMaxChars);
    expect(summary.length).toBeGreaterThan(policy.summaryMaxChars - sentence.length - 60);
    expect(summary).toMatch(/in detail\.\n\[Summary cut to 2,000 characters\]$/);
    for (const id of summarizer.requests[0]!.identifiers) expect(summary).toContain(id);
  });

  it("gives a summariser that hangs up only its timeout", async () => {
    await exchange("k", 6);
    const summarizer = new ScriptedSummarizer(
      (r) => new Promise((_, reject) => r.signal?.addEventListener("abort", () => reject(r.signal?.reason))),
    );
    const result = await compactor(summarizer).maybeCompact({
      key: "k",
      context: await context("k"),
      policy: { ...policy, timeoutMs: 50 },
    });
    expect(result).toBeUndefined();
    expect((await context("k")).entries.at(-1)).toMatchObject({ type: "note", code: "COMPACTION_FAILED" });
  });

  it("compacts on demand below the thresholds, and says when there is nothing to compact", async () => {
    await exchange("k", 2);
    const summarizer = new ScriptedSummarizer((r) => `On demand. ${r.identifiers.join(" ")}`);
    const c = compactor(summarizer);
    const outcome = await c.compact({ key: "k", context: await context("k"), policy });
    expect(outcome.reason).toBe("manual");
    expect(outcome.entry.firstKeptSeq).toBe(3);
    await store.append("x", [{ type: "message", role: "user", content: "only one" }], { init });
    await expect(c.compact({ key: "x", context: await context("x"), policy })).rejects.toMatchObject({
      code: "NOTHING_TO_COMPACT",
    });
  });

  it("compacts a short titled session on demand: only messages count, not the title entry", async () => {
    await exchange("k", 1);
    await store.append("k", [{ type: "title", title: "Tickets about ABC", by: "offline" }]);
    await exchange("k", 2, 1);
    const summarizer = new ScriptedSummarizer((r) => `On demand. ${r.identifiers.join(" ")}`);
    const defaults = { ...DEFAULT_COMPACTION, retryAfterMs: 1000 };
    const c = compactor(summarizer);
    const outcome = await c.compact({ key: "k", context: await context("k"), policy: defaults });
    expect(outcome.entry.firstKeptSeq).toBe(4);
    expect(outcome.entry.summary).toContain("ABC-100");
  });

  it("with the compaction thread's offline summariser, hands the thread one piece of work per compaction", async () => {
    await exchange("k", 6);
    const thread = compactionThread();
    try {
      const c = new Compactor(
        thread.offline,
        (key, entries, options) => store.append(key, entries, options),
        () => clock,
        thread,
      );
      const outcome = (await c.maybeCompact({ key: "k", context: await context("k"), policy }))!;
      expect(thread.threaded).toBe(1);
      expect(outcome.entry).toMatchObject({ type: "compaction", summarizer: "offline", firstKeptSeq: 9 });
      // The ticket numbers of what was summarised are kept verbatim, as the identifier step requires.
      for (const ticket of ["ABC-100", "ABC-103"]) expect(outcome.entry.summary).toContain(ticket);
    } finally {
      await thread.close();
    }
  });
});
