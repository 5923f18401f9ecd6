import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createEngine,
  type Engine,
  type EntryInput,
  type Envelope,
  type TurnContext,
} from "../../src/index.js";
import type { AppendOptions } from "../../src/store/store.js";

const dm = (sender: string, text: string, extra: Partial<Envelope> = {}): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: sender },
  sender: { id: sender },
  text,
  ...extra,
});

describe("engine", () => {
  let dataDir: string;
  let engine: Engine;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-engine-"));
    engine = await createEngine({ dataDir });
  });

  afterEach(async () => {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps its SQLite file under the data dir and finds it again", async () => {
    await engine.turnWith(dm("42", "hello"), async () => "hi");
    await engine.close();
    engine = await createEngine({ dataDir });
    expect(engine.store.backend).toBe("sqlite");
    const history = await engine.history("telegram:42");
    expect(history.map((e) => (e.type === "message" ? `${e.role}:${e.content}` : e.type))).toEqual([
      "user:hello",
      "assistant:hi",
      "title",
    ]);
    expect((await engine.sessions.get("telegram:42"))!.title).not.toBe("");
  });

  it("runs a turn: input stored, context handed over, reply stored as an answer to it", async () => {
    let seen: TurnContext | undefined;
    await engine.turnWith(dm("42", "first"), async () => "one");
    const result = await engine.turnWith(dm("42", "second"), async (context) => {
      seen = context;
      return { content: "two", usage: { inputTokens: 12, outputTokens: 3, model: "m" } };
    });
    expect(result).toMatchObject({ key: "telegram:42", deduplicated: false });
    // The title of the first exchange is written in the background: it may or may not be in between.
    expect(seen!.entries.filter((e) => e.type === "message").map((e) => e.content)).toEqual([
      "first",
      "one",
      "second",
    ]);
    expect(seen!.messages.map((m) => `${m.role}:${m.content}`)).toEqual([
      "user:first",
      "assistant:one",
      "user:second",
    ]);
    expect(seen!.input).toEqual(result.input);
    expect(result.reply).toMatchObject({ role: "assistant", content: "two", replyTo: result.input?.id });
    const session = (await engine.sessions.get("telegram:42"))!;
    expect(session).toMatchObject({
      agent: "main",
      channel: "telegram",
      chatType: "direct",
      createdBy: "42",
    });
    expect(session.messageCount).toBe(4);
    const last = (await engine.history("telegram:42", { limit: 1 }))[0];
    expect(last).toMatchObject({ type: "usage", inputTokens: 12, outputTokens: 3 });
  });

  it("answers concurrent messages on one session one turn at a time, each seeing the previous reply", async () => {
    let running = 0;
    let overlap = false;
    const seenBefore: string[] = [];
    const turns = Array.from({ length: 15 }, (_, i) =>
      engine.turnWith(dm("7", `q${i}`), async (context) => {
        running++;
        if (running > 1) overlap = true;
        await new Promise((r) => setTimeout(r, 1));
        running--;
        const previous = context.entries.filter((e) => e.type === "message").at(-2);
        seenBefore.push(previous?.type === "message" ? previous.content : "nothing");
        return `a${i}`;
      }),
    );
    const results = await Promise.all(turns);
    expect(overlap).toBe(false);
    expect(results.map((r) => r.reply?.content)).toEqual(Array.from({ length: 15 }, (_, i) => `a${i}`));
    expect(seenBefore).toEqual(["nothing", ...Array.from({ length: 14 }, (_, i) => `a${i}`)]);
  });

  it("refuses a message beyond the queue bound of a busy session with SESSION_BUSY", async () => {
    await engine.close();
    engine = await createEngine({ dataDir, maxQueuedTurns: 1 });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const first = engine.turnWith(dm("6", "a"), async () => {
      await gate;
      return "x";
    });
    const second = engine.turnWith(dm("6", "b"), async () => "y");
    await expect(engine.turnWith(dm("6", "c"), async () => "z")).rejects.toMatchObject({
      code: "SESSION_BUSY",
    });
    release();
    await Promise.all([first, second]);
    expect((await engine.history("telegram:6")).filter((e) => e.type === "message")).toHaveLength(4);
  });

  it("runs turns of different sessions in parallel", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow = engine.turnWith(dm("1", "slow"), async () => {
      await gate;
      return "slow done";
    });
    const fast = await engine.turnWith(dm("2", "fast"), async () => "fast done");
    expect(fast.reply?.content).toBe("fast done");
    expect(engine.queued().get("telegram:1")).toBe(1);
    release();
    expect((await slow).reply?.content).toBe("slow done");
  });

  it("records a runtime's own compaction as a note and removes nothing", async () => {
    await engine.turnWith(dm("12", "first"), async () => "one");
    await engine.turnWith(dm("12", "second"), async () => ({
      content: "two",
      runtimeCompaction: { beforeTokens: 150000, afterTokens: 42000 },
    }));
    const history = await engine.history("telegram:12");
    const note = history.find((e) => e.type === "note");
    expect(note).toMatchObject({ code: "RUNTIME_COMPACTED" });
    expect(note?.type === "note" && note.text).toBe(
      "main compacted its own history: 150,000 to 42,000 tokens. Nothing was removed from this transcript.",
    );
    expect(history.filter((e) => e.type === "message")).toHaveLength(4);
  });

  it("answers a redelivered platform message from history without running again", async () => {
    let runs = 0;
    const run = async () => `reply ${++runs}`;
    const first = await engine.turnWith(dm("9", "hi", { platformMessageId: "tg-100" }), run);
    const again = await engine.turnWith(dm("9", "hi", { platformMessageId: "tg-100" }), run);
    expect(runs).toBe(1);
    expect(again).toMatchObject({ deduplicated: true, reply: { id: first.reply?.id, content: "reply 1" } });
    expect((await engine.sessions.get("telegram:9"))!.messageCount).toBe(2);
  });

  it("records a failed turn as a note, keeps the input, and lets the next turn run", async () => {
    await expect(
      engine.turnWith(dm("5", "will fail"), async () => {
        throw new Error("model unreachable");
      }),
    ).rejects.toMatchObject({ code: "TURN_FAILED" });
    const next = await engine.turnWith(dm("5", "again"), async (context) => `saw ${context.entries.length}`);
    expect(next.reply?.content).toBe("saw 3");
    const history = await engine.history("telegram:5");
    expect(history[1]).toMatchObject({ type: "note", level: "error", code: "TURN_FAILED" });
    expect(history[1]!.type === "note" && history[1]!.text).toContain("model unreachable");
  });

  it("cancels a turn whose signal fires while it waits, storing nothing for it", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const first = engine.turnWith(dm("3", "first"), async () => {
      await gate;
      return "ok";
    });
    const controller = new AbortController();
    const second = engine.turnWith(dm("3", "second"), async () => "never", { signal: controller.signal });
    // A waiting turn is cancelled at once, while the first still runs.
    const cancelled = expect(second).rejects.toMatchObject({ code: "TURN_CANCELLED" });
    controller.abort();
    await cancelled;
    release();
    await first;
    expect((await engine.history("telegram:3")).map((e) => e.type === "message" && e.content)).toEqual([
      "first",
      "ok",
    ]);
  });

  it("resets after the running turn, and history reaches archived generations on request", async () => {
    await engine.close();
    engine = await createEngine({ dataDir, titles: { enabled: false } });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const turn = engine.turnWith(dm("8", "in flight"), async () => {
      await gate;
      return "finished";
    });
    const reset = engine.reset("telegram:8", "api");
    release();
    const [turnResult, resetResult] = await Promise.all([turn, reset]);
    expect(resetResult.archived.id).toBe(turnResult.sessionId);
    expect(resetResult.archived.messageCount).toBe(2);
    await engine.turnWith(dm("8", "fresh"), async () => "new start");
    expect((await engine.history("telegram:8")).map((e) => e.type === "message" && e.content)).toEqual([
      "fresh",
      "new start",
    ]);
    const all = await engine.history("telegram:8", { includeArchived: true });
    expect(all.map((e) => (e.type === "message" ? e.content : e.type))).toEqual([
      "in flight",
      "finished",
      "reset",
      "fresh",
      "new start",
    ]);
    const tail = await engine.history("telegram:8", { includeArchived: true, limit: 3 });
    expect(tail.map((e) => (e.type === "message" ? e.content : e.type))).toEqual([
      "reset",
      "fresh",
      "new start",
    ]);
    const before = await engine.history("telegram:8", { before: 2 });
    expect(before.map((e) => e.seq)).toEqual([1]);
  });

  it("appends to a key without an envelope, guessing its agent and channel", async () => {
    await engine.append("app_api:bob/s1", [{ type: "message", role: "user", content: "from the app" }]);
    const session = (await engine.sessions.get("app_api:bob/s1"))!;
    expect(session).toMatchObject({ channel: "app_api", createdBy: "bob", agent: "main" });
    const context = (await engine.context("app_api:bob/s1"))!;
    expect(context.entries).toHaveLength(1);
  });

  it("rejects invalid keys and unknown sessions with their codes", async () => {
    await expect(engine.history("")).rejects.toMatchObject({ code: "INVALID_KEY" });
    await expect(engine.history("bad\u0000key")).rejects.toMatchObject({ code: "INVALID_KEY" });
    await expect(engine.history("x".repeat(513))).rejects.toMatchObject({ code: "INVALID_KEY" });
    await expect(engine.history("nobody:1")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(engine.delete("nobody:1")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await expect(engine.reset("nobody:1")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });

  it("routes with its configured scopes and agents", async () => {
    await engine.close();
    engine = await createEngine({
      dataDir,
      agents: ["ops", "dev"],
      defaultAgent: "ops",
      routing: { identityLinks: { alice: ["telegram:123", "discord:dm:987"] } },
    });
    expect(engine.route({ ...dm("123", "x"), agent: "dev" }).key).toBe("dev:telegram:123");
    const viaDiscord = engine.route({
      channel: "discord",
      chat: { type: "direct", id: "dm-chan" },
      sender: { id: "987" },
      text: "hi",
    });
    expect(viaDiscord.key).toBe("ops:telegram:123");
  });

  it("makes entries durable as the agent's durability says", async () => {
    await engine.close();
    const { openStore } = await import("../../src/store/open.js");
    const real = await openStore({ backend: "sqlite", path: join(dataDir, "d.db") });
    const seen: Array<[string, string | undefined]> = [];
    // The real store, with each append's requested durability noted on the way through.
    const recording = new Proxy(real, {
      get(target, name, receiver) {
        if (name === "append") {
          return (key: string, entries: EntryInput[], options?: AppendOptions) => {
            seen.push([entries.map((e) => e.type).join("+"), options?.durability]);
            return target.append(key, entries, options);
          };
        }
        const value = Reflect.get(target, name, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    engine = await createEngine({
      dataDir,
      store: recording,
      titles: { enabled: false },
      agentOptions: { main: { durability: "meaningful", instructions: "Be brief." } },
    });
    let system: string | undefined;
    await engine.turnWith(dm("11", "ok"), async (context) => {
      system = context.messages[0]?.role === "system" ? context.messages[0].content : undefined;
      return "short";
    });
    await engine.turnWith(dm("11", "a message of at least twenty characters"), async () => "long");
    expect(system).toBe("Be brief.");
    expect(seen).toEqual([
      ["message", "relaxed"],
      ["message", "strict"],
      ["message", "strict"],
      ["message", "strict"],
    ]);
    // The engine leaves a store it was given open.
    await engine.close();
    await real.close();
  });

  it("reports committed changes and turns as events, a throwing listener breaking nothing", async () => {
    const seen: string[] = [];
    engine.events.on(() => {
      throw new Error("broken subscriber");
    });
    const off = engine.events.on((event) => {
      if (event.type === "appended") seen.push(`${event.type}:${event.entries.map((e) => e.type).join("+")}`);
      else seen.push(event.type);
    });
    await engine.turnWith(dm("13", "hi", { platformMessageId: "p1" }), async () => "hello");
    await engine.turnWith(dm("13", "hi", { platformMessageId: "p1" }), async () => "again");
    await engine.reset("telegram:13");
    await engine.delete("telegram:13");
    off();
    await engine.turnWith(dm("13", "after"), async () => "unseen");
    expect(seen.filter((t) => !t.includes("title"))).toEqual([
      "turn.started",
      "appended:message",
      "appended:message",
      "turn.finished",
      "turn.started",
      "turn.finished",
      "reset",
      "deleted",
    ]);
  });
});
