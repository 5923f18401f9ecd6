import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { overview } from "../../src/gateway/overview.js";
import { searchSessions } from "../../src/gateway/session-search.js";
import type { EntryInput } from "../../src/model/entry.js";

const HOUR = 3_600_000;
const init = (createdBy: string) => ({ agent: "main", channel: "cli", createdBy });

describe("dashboard data over a real SQLite store", () => {
  let dataDir: string;
  let engine: Engine;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-dash-"));
    engine = await createEngine({ dataDir, titles: { enabled: false }, lifecycle: { sweepIntervalMs: 0 } });
  });

  afterEach(async () => {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe("text search", () => {
    beforeEach(async () => {
      for (let i = 0; i < 30; i++) {
        const key = i % 4 === 0 ? `discord:dm:${i}` : `telegram:${i}`;
        const entries: EntryInput[] = [{ type: "message", role: "user", content: `message ${i}` }];
        if (i === 7) entries.push({ type: "title", title: "Refund for Discord order" });
        await engine.append(key, entries, { init: init(String(i)) });
      }
    });

    it("finds keys and titles containing the text, ignoring case", async () => {
      const page = await searchSessions(engine, { limit: 50 }, "DISCORD");
      const keys = page.sessions.map((s) => s.key).sort();
      expect(keys).toEqual(
        ["discord:dm:0", "discord:dm:4", "discord:dm:8", "discord:dm:12", "discord:dm:16", "discord:dm:20"]
          .concat(["discord:dm:24", "discord:dm:28", "telegram:7"])
          .sort(),
      );
      expect(page).toMatchObject({ scanned: 30, partial: false });
      expect(page.nextCursor).toBeUndefined();
    });

    for (const sort of ["created", "activity"] as const) {
      it(`reads at most the scan limit per request and continues where it stopped (${sort})`, async () => {
        const found: string[] = [];
        let cursor: string | undefined;
        let requests = 0;
        let partial = 0;
        do {
          const page = await searchSessions(
            engine,
            { sort, limit: 3, ...(cursor ? { cursor } : {}) },
            "discord:",
            7,
          );
          expect(page.scanned).toBeLessThanOrEqual(7);
          expect(page.sessions.length).toBeLessThanOrEqual(3);
          if (page.partial) partial++;
          found.push(...page.sessions.map((s) => s.key));
          cursor = page.nextCursor;
          requests++;
        } while (cursor !== undefined && requests < 50);
        expect(found).toHaveLength(8);
        expect(new Set(found).size).toBe(8);
        expect(found.every((key) => key.startsWith("discord:dm:"))).toBe(true);
        expect(partial).toBeGreaterThan(0);
      });
    }

    it("keeps the other filters", async () => {
      await engine.append("discord:dm:999", [{ type: "message", role: "user", content: "x" }], {
        init: { agent: "ops", channel: "discord", createdBy: "999" },
      });
      const page = await searchSessions(engine, { agent: "ops" }, "discord");
      expect(page.sessions.map((s) => s.key)).toEqual(["discord:dm:999"]);
    });
  });

  describe("overview", () => {
    it("counts messages, tokens, compactions and active sessions per hour of the window", async () => {
      const now = Date.UTC(2026, 10, 29, 12, 30);
      const hourStart = Date.UTC(2026, 10, 29, 12);
      const message = (content: string, ts: number): EntryInput => ({
        type: "message",
        role: "user",
        content,
        ts,
      });
      // Too old for a 3-hour window (10:00–13:00): not counted.
      await engine.append("a", [message("old", hourStart - 3 * HOUR + 1)], { init: init("a") });
      await engine.append("a", [message("abcd", hourStart - HOUR + 5), message("abcdefgh", hourStart + 5)]);
      await engine.append("b", [message("xy", hourStart + 10)], { init: init("b") });
      await engine.append("b", [
        {
          type: "compaction",
          summary: "s",
          fromSeq: 1,
          throughSeq: 1,
          firstKeptSeq: 2,
          tokensBefore: 10,
          tokensAfter: 1,
          summarizer: "offline",
          ts: hourStart + 20,
        },
      ]);
      // Inactive for days: outside the window, never read.
      await engine.append("c", [message("ancient", hourStart - 50 * HOUR)], { init: init("c") });

      const result = await overview(engine, 3, now);
      expect(result.from).toBe(hourStart - 2 * HOUR);
      expect(result.to).toBe(hourStart + HOUR);
      expect(result.hours.map((h) => h.at)).toEqual([hourStart - 2 * HOUR, hourStart - HOUR, hourStart]);
      const [, previous, current] = result.hours;
      expect(previous).toMatchObject({ activeSessions: 1, messages: 1, tokens: 1, compactions: 0 });
      expect(current).toMatchObject({ activeSessions: 2, messages: 2, tokens: 3, compactions: 1 });
      expect(result.totals).toEqual({ sessions: 2, messages: 3, tokens: 4, compactions: 1 });
      expect(result.truncated).toBe(false);
    });
  });
});
