import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import type { Summarizer } from "../../src/model/summarizer.js";
import type { TextModel } from "../../src/model/text-model.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { SessionPage, SessionQuery } from "../../src/store/store.js";
import { telegramDm } from "../support/envelopes.js";

const KEY = "telegram:42";

describe("writes land in the generation they were computed for", () => {
  let dir: string;
  let path: string;
  /** Another process's connection to the same file: the CLI resetting while the gateway works. */
  let cli: SqliteStore;
  let engine: Engine | undefined;
  const open = async (config: Parameters<typeof createEngine>[0] = {}) => {
    engine = await createEngine({
      dataDir: dir,
      store: { backend: "sqlite", path },
      lifecycle: { sweepIntervalMs: 0 },
      ...config,
    });
    return engine;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-generations-"));
    path = join(dir, "sessiond.db");
    cli = new SqliteStore({ path });
  });
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
    await cli.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a reply computed before another process reset the session fails with SESSION_CHANGED and is stored nowhere", async () => {
    const e = await open({ titles: { enabled: false } });
    const first = await e.turnWith(telegramDm("hello"), async () => "hi");
    await expect(
      e.turnWith(telegramDm("and now?"), async () => {
        await cli.reset(KEY, "manual");
        return "a late reply";
      }),
    ).rejects.toMatchObject({ code: "SESSION_CHANGED" });
    expect((await cli.getSession(KEY))!.entryCount).toBe(0);
    const old = await cli.readEntries(first.sessionId);
    expect(old.map((entry) => entry.type === "message" && entry.content)).toEqual([
      "hello",
      "hi",
      "and now?",
      false,
    ]);
  });

  it("a title checked against the session just before another process reset it does not land on the next one", async () => {
    let asked = false;
    const titler: TextModel = {
      provider: "openai",
      model: "titler",
      complete: async () => {
        asked = true;
        return { text: "Greetings and small talk", model: "titler" };
      },
    };
    // The title writer's last look at the session comes just before the CLI's reset commits.
    const store = new SqliteStore({ path });
    const getSession = store.getSession.bind(store);
    let reset = false;
    store.getSession = async (key: string) => {
      const session = await getSession(key);
      if (asked && !reset) {
        reset = true;
        await cli.reset(key, "manual");
      }
      return session;
    };
    const e = await open({ store, models: { titler }, titles: { model: "titler" } });
    await e.turnWith(telegramDm("hello"), async () => "hi");
    await e.close();
    expect(reset).toBe(true);
    const current = (await cli.getSession(KEY))!;
    expect(current.generation).toBe(2);
    expect(current.title).toBe("");
    expect(await cli.readEntries(current.id)).toEqual([]);
  });

  it("a compaction computed before another process reset the session does not land on the next one", async () => {
    let resets = 0;
    const summarizer: Summarizer = {
      name: "scripted",
      summarize: async () => {
        if (resets++ === 0) await cli.reset(KEY, "manual");
        return { summary: "They talked about the weather." };
      },
    };
    const e = await open({
      titles: { enabled: false },
      // The third input makes 5 (not over), its reply 6: the compaction runs after the reply.
      compaction: { summarizer, maxMessages: 5, keepRecent: 2 },
    });
    await e.turnWith(telegramDm("hello there"), async () => "hi");
    await e.turnWith(telegramDm("nice weather"), async () => "indeed");
    // The compaction runs after the reply: the reply is out before the reset, the compaction after it is dropped.
    const third = await e.turnWith(telegramDm("more weather"), async () => "sunny");
    expect(third.reply?.content).toBe("sunny");
    await e.idle(KEY);
    expect(resets).toBe(1);
    const [current, archived] = await cli.generations(KEY);
    expect(await cli.readEntries(current!.id)).toEqual([]);
    const kept = await cli.readEntries(archived!.id);
    expect(kept.map((entry) => entry.type)).not.toContain("compaction");
    expect(kept.filter((entry) => entry.type === "message")).toHaveLength(6);
  });

  it("forgetting a person waits for the turn running on their session, in its lane", async () => {
    let listed!: () => void;
    const listing = new Promise<void>((resolve) => {
      listed = resolve;
    });
    const store = new MemoryStore();
    const list = store.listSessions.bind(store);
    store.listSessions = async (query?: SessionQuery): Promise<SessionPage> => {
      const page = await list(query);
      listed();
      return page;
    };
    const e = await createEngine({
      dataDir: dir,
      store,
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
      routing: { identityLinks: { alice: [KEY] } },
    });
    engine = e;
    let forgetting: ReturnType<Engine["identity"]["forget"]> | undefined;
    const turn = await e.turnWith(telegramDm("hello"), async () => {
      forgetting = e.identity.forget("alice");
      await listing;
      // Whatever forget does without waiting for the lane is done once this turn of the loop is over.
      await new Promise((resolve) => setImmediate(resolve));
      return "hi";
    });
    expect(turn.reply?.content).toBe("hi");
    const forgotten = await forgetting!;
    expect(forgotten.keys).toEqual([{ key: KEY, sessions: 1, entries: 2 }]);
    expect(await e.sessions.generations(KEY)).toEqual([]);
  });

  it("forgetting a person also deletes the runtime sessions and share links of their keys", async () => {
    const e = await open({ routing: { identityLinks: { alice: [KEY] } } });
    await e.turn(telegramDm("hello"));
    await e.idle(KEY);
    const link = await e.shares.create(KEY);
    await e.agents.store.save({ agent: "main", key: KEY, runtime: "codex", id: "t-1", data: {}, savedAt: 1 });
    expect(await e.shares.list(KEY)).toEqual([link]);
    expect(await e.agents.store.get("main", KEY)).toMatchObject({ id: "t-1" });
    const forgotten = await e.identity.forget("alice");
    expect(forgotten.keys.map((k) => k.key)).toEqual([KEY]);
    expect(await e.agents.store.get("main", KEY)).toBeUndefined();
    expect(await e.shares.list(KEY)).toEqual([]);
  });
});
