import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import type { Envelope } from "../../src/model/envelope.js";
import { isSearchable } from "../../src/search/searchable.js";
import { filesHolding, uniqueWord } from "./byte-scan.js";

function dm(id: string, text: string): Envelope {
  return { channel: "telegram", chat: { type: "direct", id }, sender: { id }, text };
}

async function search(e: Engine, query: { text: string }) {
  if (!isSearchable(e.store)) throw new Error("the store searches");
  return e.store.search(query);
}

const BACKENDS = {
  sqlite: (dir: string) => ({ backend: "sqlite" as const, path: join(dir, "sessions.db") }),
  jsonl: (dir: string) => ({ backend: "jsonl" as const, path: join(dir, "sessions") }),
};

describe.each(Object.keys(BACKENDS) as Array<keyof typeof BACKENDS>)(
  "forget --subject on %s: no byte of their text stays in the data dir",
  (backend) => {
    let dir: string;
    let engine: Engine | undefined;

    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), "sessiond-erasure-"));
    });

    afterEach(async () => {
      await engine?.close();
      engine = undefined;
      rmSync(dir, { recursive: true, force: true });
    });

    const open = () =>
      createEngine({
        dataDir: dir,
        store: BACKENDS[backend](dir),
        lifecycle: { sweepIntervalMs: 0 },
        routing: { identityLinks: { alice: ["telegram:42", "discord:7"] } },
      });

    it("erases the DM sessions, title, inbox rows, search rows, runtime session and share link of a person", async () => {
      const e = await open();
      engine = e;
      const theirs = uniqueWord("alice");
      const kept = uniqueWord("bob");
      // Turns of the default (echo) agent: admitted to the inbox, the reply echoes the text, a title follows.
      await e.turn(dm("42", `my secret is ${theirs} please remember`));
      await e.turn(dm("42", `and again ${theirs}`));
      await e.turn(dm("99", `bob says ${kept} out loud`));
      await e.idle("telegram:42");
      await e.reset("telegram:42");
      await e.turn(dm("42", `after the reset ${theirs}`));
      await e.fork("telegram:42");
      await e.shares.create("telegram:42");
      await e.agents.store.save({
        agent: "main",
        key: "telegram:42",
        runtime: "codex",
        id: "thread-1",
        data: { note: theirs },
        savedAt: Date.now(),
      });
      const found = await search(e, { text: theirs });
      expect(found.hits.length).toBeGreaterThan(0);
      expect(filesHolding(dir, theirs).length).toBeGreaterThan(0);

      const receipt = await e.forget({ subject: "discord:7" });
      expect(receipt.subject).toBe("alice");
      expect(receipt.keys.map((k) => k.key)).toContain("telegram:42");
      expect(receipt.sessions).toBeGreaterThanOrEqual(3);
      expect(receipt.entries).toBeGreaterThanOrEqual(6);
      expect(receipt.inboxRows).toBe(3);
      expect(receipt.runtimeAndShareKeys).toBeGreaterThanOrEqual(1);
      expect(receipt.scrub).toMatch(/VACUUM/);
      expect(receipt.notErased).toEqual([expect.stringContaining("group sessions")]);

      // While the store is open…
      expect(filesHolding(dir, theirs)).toEqual([]);
      expect(filesHolding(dir, kept).length).toBeGreaterThan(0);
      expect(await e.agents.store.get("main", "telegram:42")).toBeUndefined();
      expect((await search(e, { text: theirs })).hits).toEqual([]);
      expect((await search(e, { text: kept })).hits.length).toBeGreaterThan(0);
      // The vocabulary was rebuilt from what remains: the last word typed still expands to the other's word.
      expect((await search(e, { text: kept.slice(0, 12) })).hits.length).toBeGreaterThan(0);
      // …and once it closed.
      await e.close();
      engine = undefined;
      expect(filesHolding(dir, theirs)).toEqual([]);
      expect(filesHolding(dir, kept).length).toBeGreaterThan(0);
    });
  },
);
