import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readHistory } from "../../src/cli/history.js";
import { exportJsonlFiles, exportSessions } from "../../src/export/index.js";
import { createEngine, type Engine, type TurnContext } from "../../src/index.js";
import { searchStore } from "../../src/search/searchable.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { webChatOn } from "../support/envelopes.js";

const said = (context: TurnContext) =>
  context.entries.map((e) => (e.type === "message" ? `${e.role}:${e.content}` : e.type));

for (const backend of ["sqlite", "jsonl"] as const) {
  describe(`engine fork, rewind and branches (${backend})`, () => {
    let dataDir: string;
    let engine: Engine;

    beforeEach(async () => {
      dataDir = mkdtempSync(join(tmpdir(), `sessiond-branches-${backend}-`));
      engine = await createEngine({
        dataDir,
        titles: { enabled: false },
        ...(backend === "jsonl" ? { store: { backend, path: join(dataDir, "sessions") } } : {}),
      });
    });

    afterEach(async () => {
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("sends a fork's runtime its inherited history, then its own; the parent's runtime never sees the fork's", async () => {
      await engine.turnWith(webChatOn("admin-a", "my name is Ada"), async () => "hello Ada");
      const { session, forkedFrom } = await engine.fork("admin-a");
      expect(session.key).toMatch(/^admin-a\/fork-[0-9a-z]{10}$/);
      expect(forkedFrom).toMatchObject({ key: "admin-a", seq: 2 });
      let seen: string[] = [];
      await engine.turnWith(webChatOn(session.key, "what is my name?"), async (context) => {
        seen = said(context);
        return "Ada";
      });
      expect(seen).toEqual(["user:my name is Ada", "assistant:hello Ada", "user:what is my name?"]);
      await engine.turnWith(webChatOn("admin-a", "in the parent"), async (context) => {
        seen = said(context);
        return "ok";
      });
      expect(seen).toEqual(["user:my name is Ada", "assistant:hello Ada", "user:in the parent"]);
      expect((await engine.history(session.key)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    });

    it("names a platform conversation's fork as a web chat, so the dashboard's chat can go on in it", async () => {
      await engine.turnWith(
        { channel: "telegram", chat: { type: "direct", id: "42" }, sender: { id: "42" }, text: "hi" },
        async () => "hello",
      );
      const { session } = await engine.fork("telegram:42");
      expect(session.key).toMatch(/^admin-fork-[0-9a-z]{10}$/);
      expect(session.forkedFrom).toMatchObject({ key: "telegram:42", seq: 2 });
      let seen: string[] = [];
      await engine.turnWith(webChatOn(session.key, "go on"), async (context) => {
        seen = said(context);
        return "going on";
      });
      expect(seen).toEqual(["user:hi", "assistant:hello", "user:go on"]);
    });

    it("forks from the last completed entry while a turn runs, and the running turn ends in the parent only", async () => {
      await engine.turnWith(webChatOn("admin-b", "first"), async () => "first reply");
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const turn = engine.turnWith(webChatOn("admin-b", "second"), async () => {
        started();
        await gate;
        return "second reply";
      });
      await running;
      const fork = await engine.fork("admin-b", { toKey: "admin-b-fork" });
      release();
      await turn;
      expect(fork.forkedFrom.seq).toBe(2);
      const forked = await engine.history("admin-b-fork");
      expect(forked.map((e) => (e.type === "message" ? e.content : e.type))).toEqual([
        "first",
        "first reply",
      ]);
      const parent = await engine.history("admin-b");
      expect(parent.map((e) => (e.type === "message" ? e.content : e.type))).toEqual([
        "first",
        "first reply",
        "second",
        "second reply",
      ]);
    });

    it("rewinds: the next turn's runtime gets the history before the entry, and the branch stays listed", async () => {
      await engine.turnWith(webChatOn("admin-c", "q1"), async () => "a1");
      await engine.turnWith(webChatOn("admin-c", "q2"), async () => "a2");
      await expect(engine.rewind("admin-c", { toSeq: 3, expectHead: 3 })).rejects.toMatchObject({
        code: "SESSION_CHANGED",
      });
      const rewound = await engine.rewind("admin-c", { toSeq: 3, expectHead: 4 });
      let seen: string[] = [];
      await engine.turnWith(webChatOn("admin-c", "q2, asked again"), async (context) => {
        seen = said(context);
        return "a2'";
      });
      expect(seen).toEqual(["user:q1", "assistant:a1", "user:q2, asked again"]);
      await engine.fork("admin-c", { toKey: "admin-c-fork", atSeq: 2 });
      await expect(engine.branches("admin-nothing-here")).rejects.toMatchObject({
        code: "SESSION_NOT_FOUND",
      });
      const branches = await engine.branches("admin-c");
      expect(branches.map((b) => [b.key, b.kind, b.session.id])).toEqual([
        ["admin-c", "current", rewound.current.id],
        ["admin-c", "rewound", rewound.archived.id],
        ["admin-c-fork", "fork", expect.any(String)],
      ]);
      const archived = await engine.store.readEntries(rewound.archived.id);
      expect(archived.map((e) => (e.type === "message" ? e.content : e.type))).toEqual([
        "q1",
        "a1",
        "q2",
        "a2",
        "reset",
      ]);
    });

    it("compacts a fork whose kept entries are inherited, keeping the origin's archive whole", async () => {
      for (let i = 1; i <= 3; i++)
        await engine.turnWith(webChatOn("admin-d", `question ${i}`), async () => `answer ${i}`);
      const { session } = await engine.fork("admin-d", { toKey: "admin-d-fork" });
      const compacted = await engine.compact("admin-d-fork");
      expect(compacted.entry.sessionId).toBe(session.id);
      expect(compacted.entry.seq).toBe(7);
      const context = (await engine.context("admin-d-fork"))!;
      expect(context.summary?.seq).toBe(7);
      expect((await engine.history("admin-d")).length).toBe(6);
      expect((await engine.context("admin-d"))!.summary).toBeUndefined();
    });

    if (backend === "sqlite") {
      it("copies no entry: a fork and a rewind add session rows only", async () => {
        for (let i = 1; i <= 3; i++)
          await engine.turnWith(webChatOn("admin-rows", `q${i}`), async () => `a${i}`);
        await engine.store.flush();
        const rows = () => {
          const db = new Database(join(dataDir, "sessiond.db"), { readonly: true });
          try {
            return db
              .prepare("SELECT (SELECT count(*) FROM entries) + (SELECT count(*) FROM journal) AS n")
              .get() as {
              n: number;
            };
          } finally {
            db.close();
          }
        };
        const before = rows().n;
        await engine.fork("admin-rows", { toKey: "admin-rows-fork" });
        await engine.fork("admin-rows", { toKey: "admin-rows-early", atSeq: 2 });
        await engine.store.flush();
        expect(rows().n).toBe(before);
        await engine.rewind("admin-rows", { toSeq: 5 });
        await engine.store.flush();
        // The rewind's one row: the reset entry closing the generation it leaves.
        expect(rows().n).toBe(before + 1);
        expect((await engine.history("admin-rows-fork")).length).toBe(6);
      });

      it("finds a fork's inherited messages by search, naming the fork on the hit", async () => {
        await engine.turnWith(webChatOn("admin-e", "the zanzibar plan"), async () => "noted");
        const { session } = await engine.fork("admin-e", { toKey: "admin-e-fork" });
        const result = await searchStore(engine.store, { text: "zanzibar" });
        expect(result.hits).toHaveLength(1);
        expect(result.hits[0]!.inheritedBy).toEqual([{ key: "admin-e-fork", sessionId: session.id }]);
      });
    }

    it("exports a fork with its inherited history, as a file that reads whole on its own", async () => {
      await engine.turnWith(webChatOn("admin-x", "inherited question"), async () => "inherited answer");
      const { session } = await engine.fork("admin-x", { toKey: "admin-x-fork" });
      await engine.turnWith(webChatOn("admin-x-fork", "own question"), async () => "own answer");
      const history = await readHistory(engine, "admin-x-fork", { all: true });
      const markdown = exportSessions("md", history.sessions, history.entries);
      expect(markdown).toContain("inherited question");
      expect(markdown).toContain("own answer");
      const [file] = exportJsonlFiles(history.sessions, history.entries);
      const meta = JSON.parse(file!.text.split("\n")[0]!) as Record<string, unknown>;
      expect(meta.forked_from).toBeUndefined();
      expect(meta.copied_from).toEqual({ key: "admin-x", session_id: session.forkedFrom!.sessionId, seq: 2 });
      const dir = mkdtempSync(join(tmpdir(), "sessiond-export-fork-"));
      try {
        writeFileSync(join(dir, file!.name), file!.text);
        const reader = new JsonlStore({ path: dir });
        const read = await reader.readEntries(session.id);
        await reader.close();
        expect(read.map((e) => (e.type === "message" ? e.content : e.type))).toEqual([
          "inherited question",
          "inherited answer",
          "own question",
          "own answer",
        ]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("forgets a person with the forks of their sessions, and keeps a forked history from being deleted alone", async () => {
      await engine.turnWith(webChatOn("admin-f", "hello"), async () => "hi");
      await engine.fork("admin-f", { toKey: "admin-f-fork" });
      await expect(engine.delete("admin-f")).rejects.toMatchObject({ code: "SESSION_HAS_FORKS" });
      expect(await engine.sessions.get("admin-f")).toBeDefined();
      await engine.delete("admin-f-fork");
      await engine.delete("admin-f");
      expect(await engine.sessions.get("admin-f")).toBeUndefined();
    });
  });
}
