import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SUMMARY_HEADER } from "../../src/context/index.js";
import { createEngine, type Engine, type EngineConfig, type Envelope } from "../../src/index.js";
import { type ChatRequestBody, type OpenAiServer, startOpenAiServer } from "../support/openai-server.js";

const dm = (sender: string, text: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: sender },
  sender: { id: sender },
  text,
});

/** What a well-behaved summarising model answers: a short summary holding every identifier it was given. */
function summaryHandler(body: ChatRequestBody) {
  const user = String(body.messages.find((m) => m.role === "user")?.content ?? "");
  if (!user.includes("identifiers must appear verbatim") && !user.includes("Write the summary")) {
    return { content: "Short title here" };
  }
  const ids = [...user.matchAll(/^- (.+)$/gm)].map((m) => m[1]);
  return { content: `The user is planning a trip. Ids: ${ids.join(", ")}.`, model: "summ-1" };
}

describe("compaction in the engine", () => {
  let dataDir: string;
  let server: OpenAiServer;
  let engine: Engine;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-compaction-"));
    server = await startOpenAiServer(summaryHandler);
  });
  afterEach(async () => {
    await engine?.close();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const open = async (config: EngineConfig = {}) => {
    engine = await createEngine({
      dataDir,
      store: { backend: "sqlite", path: join(dataDir, "s.db"), durability: "relaxed" },
      models: {
        local: { provider: "openai", baseUrl: server.baseUrl, model: "summ-1", contextWindow: 4000 },
      },
      compaction: { model: "local", maxMessages: 10, keepRecent: 4, retryAfterMs: 1 },
      titles: { enabled: false },
      ...config,
    });
    return engine;
  };

  it("summarises through the OpenAI protocol once a reply passes the message threshold, keeping identifiers", async () => {
    // Eleven messages with the sixth input (not over), twelve with its reply: compacted after the reply.
    await open({
      compaction: { model: "local", maxMessages: 11, keepRecent: 4, retryAfterMs: 1 },
    });
    await engine.turnWith(
      dm("1", "Book flight LH-4411 to https://example.com/trips/42 for order 987654"),
      async () => "ok",
    );
    for (let i = 2; i <= 5; i++) await engine.turnWith(dm("1", `question ${i}`), async () => `answer ${i}`);
    expect(server.chatRequests()).toHaveLength(0);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let asked!: () => void;
    const summaryAsked = new Promise<void>((r) => {
      asked = r;
    });
    server.setHandler(async (body) => {
      asked();
      await gate;
      return summaryHandler(body);
    });
    // Twelve messages once it is stored: the reply is answered while the summary is still being written.
    const sixth = await engine.turnWith(dm("1", "question 6"), async () => "answer 6");
    expect(sixth.reply?.content).toBe("answer 6");
    expect(sixth.compaction).toBeUndefined();
    await summaryAsked;
    const seventh = engine.turnWith(dm("1", "question 7"), async (context) => {
      // It waited for the compaction: its context starts with the summary.
      expect(context.messages[0]).toMatchObject({ role: "user" });
      expect(context.messages[0]!.content.startsWith(SUMMARY_HEADER)).toBe(true);
      return "answer 7";
    });
    release();
    const compacted = (await seventh).compaction;
    expect(compacted).toMatchObject({ summarizer: "openai", model: "summ-1", fromSeq: 1 });
    const request = server.chatRequests()[0]!;
    expect(request.model).toBe("summ-1");
    expect(request.temperature).toBe(0.2);
    expect(request.messages[0]!.role).toBe("system");
    const summary = compacted!.summary;
    for (const id of ["LH-4411", "https://example.com/trips/42", "987654"]) expect(summary).toContain(id);

    await engine.idle("telegram:1");
    const context = (await engine.context("telegram:1"))!;
    expect(context.summary?.seq).toBe(compacted!.seq);
    expect(context.entries[0]!.seq).toBe(compacted!.firstKeptSeq);
    expect(context.entries.filter((e) => e.type === "message").length).toBeLessThanOrEqual(6);
    const all = await engine.history("telegram:1");
    expect(all.filter((e) => e.type === "message")).toHaveLength(14);
  });

  it("triggers on estimated tokens and on the model's context window", async () => {
    await open({
      compaction: { model: "local", maxMessages: 1000, keepRecent: 2, maxTokens: 300, retryAfterMs: 1 },
    });
    const big = "word ".repeat(100);
    let compaction: unknown;
    for (let i = 0; i < 4 && !compaction; i++) {
      compaction = (await engine.turnWith(dm("2", `${i} ${big}`), async () => "ok")).compaction;
    }
    expect(compaction).toBeDefined();
    await engine.close();

    await open({
      agentOptions: { main: { model: "local" } },
      compaction: { model: "local", maxMessages: 1000, keepRecent: 2, retryAfterMs: 1 },
    });
    const long = "token ".repeat(800);
    let viaWindow: unknown;
    for (let i = 0; i < 4 && !viaWindow; i++) {
      viaWindow = (await engine.turnWith(dm("3", `${i} ${long}`), async () => "ok")).compaction;
    }
    // 4000-token window × 0.75: three messages of ~1,200 tokens pass it.
    expect(viaWindow).toBeDefined();
  });

  it("keeps the history and answers the turn when the model fails, then recovers", async () => {
    await open();
    server.setHandler(() => ({ status: 500, body: { error: { message: "model overloaded" } } }));
    for (let i = 1; i <= 6; i++) {
      const result = await engine.turnWith(
        dm("4", `message ${i} ref XK-${1000 + i}`),
        async () => `reply ${i}`,
      );
      expect(result.compaction).toBeUndefined();
      expect(result.reply?.content).toBe(`reply ${i}`);
    }
    await engine.idle("telegram:4");
    const context = (await engine.context("telegram:4"))!;
    expect(context.summary).toBeUndefined();
    expect(context.session.generation).toBe(1);
    expect(context.entries.filter((e) => e.type === "message")).toHaveLength(12);
    const notes = context.entries.filter((e) => e.type === "note");
    expect(notes.length).toBeGreaterThan(0);
    expect(notes[0]).toMatchObject({ code: "COMPACTION_FAILED" });

    server.setHandler(summaryHandler);
    await new Promise((r) => setTimeout(r, 20));
    // Past the backoff, the next turn starts over the limit: it compacts before its runtime runs.
    const next = await engine.turnWith(dm("4", "message 7"), async () => "reply 7");
    expect(next.compaction?.summary).toContain("XK-1001");
  });

  it("compacts on demand, and a slow summary holds only its own session", async () => {
    await open();
    for (let i = 1; i <= 3; i++)
      await engine.turnWith(dm("5", `note ${i}: ticket ZZ-${i}00`), async () => "ok");
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    server.setHandler(async (body) => {
      await gate;
      return summaryHandler(body);
    });
    const order: string[] = [];
    const slow = engine.compact("telegram:5").then((r) => {
      order.push("compaction");
      return r;
    });
    const queued = engine
      .turnWith(dm("5", "after the compaction"), async () => "queued")
      .then(() => order.push("same"));
    await engine.turnWith(dm("6", "another session"), async () => "free");
    order.push("other");
    release();
    const result = await slow;
    await queued;
    expect(order).toEqual(["other", "compaction", "same"]);
    expect(result.summary).toContain("ZZ-100");
    await expect(engine.compact("nobody:1")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });
});

describe("a long session with the offline summariser", () => {
  it("stays within its context budget turn after turn over 10,000 messages", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sessiond-long-"));
    const engine = await createEngine({
      dataDir,
      store: { backend: "sqlite", path: join(dataDir, "s.db"), durability: "relaxed" },
      // This is about compaction, not the disk: no fsync per turn, no inbox.
      agentOptions: { main: { durability: "relaxed" } },
      turns: { inbox: false },
      titles: { enabled: false },
    });
    try {
      expect(engine.summarizer.name).toBe("offline");
      let maxMessages = 0;
      let maxTokens = 0;
      let compactions = 0;
      for (let i = 0; i < 5000; i++) {
        const result = await engine.turnWith(
          dm("7", `turn ${i}: the user said something about topic ${i % 97}`),
          async (context) => {
            maxMessages = Math.max(maxMessages, context.messages.length);
            maxTokens = Math.max(maxTokens, context.tokens);
            return `noted ${i}`;
          },
        );
        if (result.compaction) compactions++;
      }
      // Default policy: more than 50 messages compacts down to about 20; the summary is ≤ 2,000 chars.
      expect(maxMessages).toBeLessThanOrEqual(52);
      expect(maxTokens).toBeLessThan(2_500);
      expect(compactions).toBeGreaterThan(150);
      const session = (await engine.sessions.get("telegram:7"))!;
      expect(session.messageCount).toBe(10_000);
      const context = (await engine.context("telegram:7"))!;
      expect(context.summary?.summarizer).toBe("offline");
      expect(context.summary?.summary.startsWith("[Offline")).toBe(true);
    } finally {
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
    // 5,000 turns: over a minute on a loaded CI machine.
  }, 300_000);
});
