import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import type { Envelope } from "../../src/model/envelope.js";
import { isSearchable } from "../../src/search/searchable.js";
import { telegramGroup } from "../support/envelopes.js";
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
      expect(receipt.notErased).toEqual([]);

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

    it("erases their messages in a group, the replies to them, the summary and title made from them, in forks too", async () => {
      const e = await open();
      engine = e;
      const theirs = uniqueWord("alice");
      const kept = uniqueWord("bob");
      await e.turn(telegramGroup("-1001", "42", `alice writes ${theirs} in the group`, "g1"));
      await e.turn(telegramGroup("-1001", "99", `bob writes ${kept} in the group`, "g2"));
      await e.turn(telegramGroup("-1001", "42", `alice again ${theirs}`, "g3"));
      await e.idle("telegram:-1001");
      await e.compact("telegram:-1001");
      await e.turn(telegramGroup("-1001", "99", `bob after the summary ${kept}`, "g4"));
      await e.idle("telegram:-1001");
      const fork = await e.fork("telegram:-1001");
      await e.turn(dm("42", `a direct message ${theirs}`));
      await e.idle("telegram:42");
      const group = (await e.store.getSession("telegram:-1001"))!;
      expect(JSON.stringify(await e.store.readEntries(group.id))).toContain(theirs);
      expect(filesHolding(dir, theirs).length).toBeGreaterThan(0);

      const receipt = await e.forget({ subject: "alice" });
      expect(receipt.groups).toMatchObject({ sessions: 2, summaries: 1 });
      // Their two messages and the two echoes that answered them.
      expect(receipt.groups.messages).toBe(4);
      expect(receipt.notErased).toEqual([]);

      const entries = await e.store.readEntries(group.id);
      const erased = entries.filter((x) => x.type === "note" && x.code === "ERASED");
      // 1, 2 and 6, 7: their messages and the echoes; 3: the title written after the first exchange.
      expect(erased.map((x) => x.seq)).toEqual([1, 2, 3, 6, 7]);
      const texts = JSON.stringify(entries);
      expect(texts).not.toContain(theirs);
      expect(texts).toContain(kept);
      expect((await e.store.getSession("telegram:-1001"))!.title).toBe("");
      expect(JSON.stringify(await e.store.readEntries(fork.session.id))).not.toContain(theirs);
      expect((await e.store.getSessionById(fork.session.id))!.title).toBe("");
      // What the model is sent next: the group's context holds none of their text.
      expect(JSON.stringify(await e.store.loadContext("telegram:-1001"))).not.toContain(theirs);
      expect((await search(e, { text: theirs })).hits).toEqual([]);
      expect((await search(e, { text: kept })).hits.length).toBeGreaterThan(0);
      expect(filesHolding(dir, theirs)).toEqual([]);
      // A redelivery of their group message is refused; the group goes on.
      await expect(
        e.turn(telegramGroup("-1001", "42", `alice writes ${theirs} in the group`, "g1")),
      ).rejects.toMatchObject({
        code: "SUBJECT_ERASED",
      });
      await e.turn(telegramGroup("-1001", "99", "the group goes on", "g5"));
      await e.close();
      engine = undefined;
      expect(filesHolding(dir, theirs)).toEqual([]);
      expect(filesHolding(dir, kept).length).toBeGreaterThan(0);
    });
  },
);
