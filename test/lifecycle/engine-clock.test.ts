import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine, type Envelope } from "../../src/index.js";
import { ManualClock } from "../../src/lifecycle/clock.js";
import type { Summarizer, SummaryRequest } from "../../src/model/summarizer.js";

const dm = (text: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: "1" },
  sender: { id: "1" },
  text,
});

/** Fails while `failing` is set; otherwise summarises with every identifier it is asked for. */
class SwitchableSummarizer implements Summarizer {
  readonly name = "switchable";
  failing = true;
  calls = 0;
  async summarize(request: SummaryRequest) {
    this.calls++;
    if (this.failing) throw new Error("model down");
    return { summary: `Summary. ${request.identifiers.join(" ")}` };
  }
}

describe("one clock for the engine", () => {
  // Far from the real time, so any timestamp taken from Date.now stands out.
  const START = Date.UTC(2001, 0, 1);
  let dataDir: string;
  let engine: Engine;
  let clock: ManualClock;
  let summarizer: SwitchableSummarizer;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-clock-"));
    clock = new ManualClock(START);
    summarizer = new SwitchableSummarizer();
    engine = await createEngine({
      dataDir,
      store: { backend: "sqlite", path: join(dataDir, "s.db"), durability: "relaxed" },
      compaction: { summarizer, maxMessages: 6, keepRecent: 2, retryAfterMs: 60_000 },
      lifecycle: { clock, sweepIntervalMs: 0 },
    });
  });
  afterEach(async () => {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("dates titles, notes and compaction entries by the injected clock, and backs off by it", async () => {
    await engine.turnWith(dm("order 1001"), async () => "noted 1001");
    await expect(
      engine.turnWith(dm("fail please"), async () => Promise.reject(new Error("boom"))),
    ).rejects.toThrow();
    for (let i = 2; i <= 3; i++) await engine.turnWith(dm(`order ${1000 + i}`), async () => `noted ${i}`);
    // Over 6 messages after that reply: the compaction fails and is noted; the next turn is inside the backoff.
    await engine.idle("telegram:1");
    expect(summarizer.calls).toBe(1);
    await engine.turnWith(dm("order 1004"), async () => "noted 4");
    await engine.idle("telegram:1");
    expect(summarizer.calls).toBe(1);
    // Past the backoff on the engine's clock, with no sleep: the next turn starts over the limit, so it
    // tries again before its runtime runs, and succeeds.
    summarizer.failing = false;
    clock.advance(60_001);
    const compacted = await engine.turnWith(dm("order 1005"), async () => "noted 5");
    expect(summarizer.calls).toBe(2);
    expect(compacted.compaction).toBeDefined();
    await engine.close();

    // Closing waited for the background title; read everything back from the file.
    engine = await createEngine({
      dataDir,
      store: { backend: "sqlite", path: join(dataDir, "s.db") },
      lifecycle: { clock, sweepIntervalMs: 0 },
    });
    const history = await engine.history("telegram:1");
    const kinds = new Set(history.map((e) => (e.type === "note" ? `note:${e.code}` : e.type)));
    for (const kind of ["title", "note:TURN_FAILED", "note:COMPACTION_FAILED", "compaction"]) {
      expect(kinds).toContain(kind);
    }
    for (const entry of history) expect([START, START + 60_001]).toContain(entry.ts);
  });
});
