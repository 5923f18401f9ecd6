import { execFileSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/index.js";
import type { Entry } from "../../src/model/entry.js";
import { searchStore } from "../../src/search/searchable.js";
import type { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { useTempDir } from "../cli/helpers.js";

const tempDir = useTempDir();
const FIXTURES = "test/fixtures/store";

// The JSONL store has no schema version: its session files are CrabTalk's format, read in every layout
// sessiond has written, and its own files under .sessiond/ are rebuilt when they do not match (index.json,
// search.db) or read in both layouts (the journal). The upgrade path is tested on directories written by
// the first JSONL commit and by the last one before claims held identities
// (scripts/fixtures/write-jsonl-fixtures.sh), as tars that keep the mtimes their index.json records.
const fixtures = readdirSync(FIXTURES).filter((name) => /^jsonl-[0-9a-f]+\.tar$/.test(name));

function texts(entries: readonly Entry[]): Array<string | undefined> {
  return entries.map((e) =>
    e.type === "message" ? e.content : e.type === "note" ? e.text : e.type === "title" ? e.title : e.type,
  );
}

async function withEngine<T>(path: string, fn: (engine: Engine) => Promise<T>): Promise<T> {
  const engine = await createEngine({ dataDir: tempDir(), store: { backend: "jsonl", path } });
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

function extracted(fixture: string, options: { index: boolean }): string {
  const dir = tempDir();
  execFileSync("tar", ["-x", "-f", join(FIXTURES, fixture), "-C", dir]);
  if (!options.index) rmSync(join(dir, ".sessiond", "index.json"));
  return dir;
}

describe("JSONL directories written by earlier sessiond", () => {
  it("has the fixtures of both earlier layouts", () => {
    expect(fixtures.sort()).toEqual(["jsonl-0050969.tar", "jsonl-ffd9dd2.tar"]);
  });

  for (const fixture of fixtures) {
    it(`${fixture}: its index.json gives the same sessions as reading the files`, async () => {
      const list = (path: string, fromIndex: boolean) =>
        withEngine(path, async (engine) => {
          // The tar keeps the files' mtimes to the nanosecond, so the old index.json is taken as it is.
          const stats = (engine.store as JsonlStore).indexStats();
          expect(fromIndex ? stats.filesRead : stats.filesFromIndex).toBe(0);
          const page = await engine.sessions.list({ limit: 100 });
          const archived = await engine.sessions.generations("telegram:42");
          return [...page.sessions, ...archived].sort((a, b) => a.id.localeCompare(b.id));
        });
      const fromIndex = await list(extracted(fixture, { index: true }), true);
      const fromFiles = await list(extracted(fixture, { index: false }), false);
      expect(fromIndex.map((s) => s.key).sort()).toEqual([
        "slack:T1:C9",
        "telegram:42",
        "telegram:42",
        "telegram:42",
        "web:fixture-1",
        "web:fixture-2",
        "web:fixture-3",
        "web:tools",
      ]);
      expect(fromIndex).toEqual(fromFiles);
    });

    it(`${fixture}: every session and entry is read, searched, and continued`, async () => {
      const dir = extracted(fixture, { index: true });
      await withEngine(dir, async (engine) => {
        const page = await engine.sessions.list({ limit: 100 });
        expect(page.sessions.map((s) => s.key).sort()).toEqual([
          "slack:T1:C9",
          "telegram:42",
          "web:fixture-1",
          "web:fixture-2",
          "web:fixture-3",
          "web:tools",
        ]);
        const generations = await engine.sessions.generations("telegram:42");
        const archived = generations.find((g) => g.state === "archived");
        expect(archived?.title).toBe("Window seat QX-1234");
        expect(texts(await engine.store.readEntries(archived?.id ?? ""))).toEqual([
          "I prefer window seats. Booking ref QX-1234.",
          "Noted: window seat for QX-1234.",
          "Window seat QX-1234",
          "reset",
        ]);
        expect(texts(await engine.history("telegram:42"))).toEqual([
          "après la réinitialisation, merci",
          "model timed out",
        ]);
        const context = await engine.context("slack:T1:C9");
        expect(context?.summary?.summary).toContain("OPS-701");
        expect(texts(context?.entries.slice(-1) ?? [])).toEqual(["after the compaction"]);

        const tools = await engine.history("web:tools");
        expect(tools.map((e) => (e.type === "message" ? [e.role, e.content] : [e.type]))).toEqual([
          ["user", "what is the weather in Lyon?"],
          ["assistant", ""],
          ["tool", '{"temp_c":21}'],
          ["assistant", "21 °C in Lyon."],
        ]);
        expect(tools[1]).toMatchObject({
          toolCalls: [{ id: "call_1", name: "weather", arguments: { city: "Lyon", days: 2 } }],
        });
        expect(tools[2]).toMatchObject({ toolCallId: "call_1" });

        await engine.append("web:fixture-1", [
          { type: "message", role: "user", content: "after the upgrade" },
        ]);
        // The search sidecar is built for the old directory in the background.
        let keys: string[] = [];
        for (let attempt = 0; attempt < 200 && keys.length === 0; attempt++) {
          const found = await searchStore(engine.store, { text: "INV-200" });
          keys = found.indexing ? [] : found.hits.map((h) => h.key);
          if (keys.length === 0) await new Promise((resolve) => setTimeout(resolve, 25));
        }
        expect(keys).toEqual(["web:fixture-2"]);
      });
      // What today's code wrote is there for the next start, beside the old lines.
      await withEngine(dir, async (engine) => {
        expect(texts(await engine.history("web:fixture-1"))).toEqual([
          "question 1 about the invoice INV-100",
          "answer 1",
          "after the upgrade",
        ]);
        const found = await searchStore(engine.store, { text: "upgrade" });
        expect(found.hits.map((h) => h.key)).toEqual(["web:fixture-1"]);
        // A new generation of an old key, in today's file names, follows the old ones.
        await engine.reset("telegram:42", "manual");
        await engine.append("telegram:42", [{ type: "message", role: "user", content: "third generation" }]);
      });
      await withEngine(dir, async (engine) => {
        const generations = await engine.sessions.generations("telegram:42");
        expect(generations.map((g) => [g.generation, g.state]).sort()).toEqual([
          [1, "archived"],
          [2, "archived"],
          [3, "active"],
        ]);
        expect(texts(await engine.history("telegram:42"))).toEqual(["third generation"]);
      });
    });
  }
});
