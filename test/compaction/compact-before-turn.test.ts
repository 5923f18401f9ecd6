import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ChatMessage, SUMMARY_HEADER } from "../../src/context/index.js";
import {
  createEngine,
  type Engine,
  type EngineConfig,
  type EntryInput,
  type Envelope,
} from "../../src/index.js";
import { echoHandler, type OpenAiServer, startOpenAiServer } from "../support/openai-server.js";

const dm = (text: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: "ann" },
  sender: { id: "ann" },
  text,
});

/** `n` stored messages, user and assistant by turns, each `pad` long. */
function messages(n: number, pad = ""): EntryInput[] {
  return Array.from({ length: n }, (_, i) => ({
    type: "message" as const,
    role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
    content: `history message ${i} ${pad}`,
  }));
}

/** What the runtime was handed: the messages and the token estimate of the context. */
interface Seen {
  messages: ChatMessage[];
  tokens: number;
  summary: boolean;
}

describe("a turn whose stored history is over the limits compacts before the runtime runs", () => {
  let engine: Engine | undefined;
  let dataDir: string | undefined;
  let server: OpenAiServer | undefined;
  afterEach(async () => {
    await engine?.close();
    await server?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    engine = undefined;
    server = undefined;
    dataDir = undefined;
  });

  const open = async (config: EngineConfig = {}) => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-compact-first-"));
    engine = await createEngine({
      dataDir,
      store: { backend: "sqlite", path: join(dataDir, "s.db"), durability: "relaxed" },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
      ...config,
    });
    return engine;
  };

  const turn = async (e: Engine, envelope: Envelope): Promise<Seen> => {
    let seen: Seen | undefined;
    await e.turnWith(envelope, async (context) => {
      seen = {
        messages: context.messages,
        tokens: context.tokens,
        summary: context.summary !== undefined,
      };
      return "ok";
    });
    if (!seen) throw new Error("the runtime did not run");
    return seen;
  };

  const nonSystem = (seen: Seen) => seen.messages.filter((m) => m.role !== "system");

  it("51 stored messages (ZeroClaw: more than 50): the model gets the summary and the 20 newest", async () => {
    const e = await open();
    await e.append("telegram:ann", messages(51));
    const seen = await turn(e, dm("the next question"));
    expect(seen.summary).toBe(true);
    expect(seen.messages[0]?.content.startsWith(SUMMARY_HEADER)).toBe(true);
    // The summary, then the 20 newest messages: the input is the last of them.
    expect(nonSystem(seen).length).toBeLessThanOrEqual(21);
    expect(seen.messages.at(-1)?.content).toContain("the next question");
    const history = await e.history("telegram:ann");
    expect(history.filter((x) => x.type === "message")).toHaveLength(53);
    expect(history.some((x) => x.type === "compaction")).toBe(true);
  });

  it("a history of about 105,000 tokens (CrabTalk: past 100,000): the model gets fewer than 100,000", async () => {
    const e = await open();
    // 30 messages of ~3,500 tokens (14,000 bytes) each: under 50 messages, over 100,000 tokens.
    await e.append("telegram:ann", messages(30, "x".repeat(14_000)));
    const before = (await e.context("telegram:ann"))!;
    expect(before.entries.length).toBe(30);
    const seen = await turn(e, dm("and now?"));
    expect(seen.summary).toBe(true);
    expect(seen.tokens).toBeLessThan(100_000);
  });

  it("an agent's own limits (10/4) hold for what its runtime gets", async () => {
    const e = await open({ agentOptions: { main: { compaction: { maxMessages: 10, keepRecent: 4 } } } });
    await e.append("telegram:ann", messages(11));
    const seen = await turn(e, dm("q"));
    expect(seen.summary).toBe(true);
    expect(nonSystem(seen).length).toBeLessThanOrEqual(5);
  });

  it("group messages recorded without a turn are compacted before the turn that follows them", async () => {
    const e = await open({ compaction: { maxMessages: 12, keepRecent: 5 } });
    const group = (sender: string, text: string): Envelope => ({
      channel: "slack",
      chat: { type: "group", id: "team" },
      sender: { id: sender },
      text,
    });
    for (let i = 0; i < 20; i++) await e.record(group(i % 2 ? "bob" : "carol", `chatter ${i}`));
    const seen = await turn(e, group("bob", "@bot sum it up"));
    expect(seen.summary).toBe(true);
    expect(nonSystem(seen).length).toBeLessThanOrEqual(6);
  });

  it("when the summary cannot be written, the runtime still gets no more than the limits (the newest that fit)", async () => {
    server = await startOpenAiServer(() => ({ status: 500, body: { error: { message: "down" } } }));
    const e = await open({
      models: { local: { provider: "openai", baseUrl: server.baseUrl, model: "m" } },
      compaction: { model: "local", maxMessages: 10, keepRecent: 4, retryAfterMs: 60_000 },
    });
    await e.append("telegram:ann", messages(15));
    const seen = await turn(e, dm("still there?"));
    expect(seen.summary).toBe(false);
    expect(nonSystem(seen).length).toBeLessThanOrEqual(4);
    expect(seen.messages.at(-1)?.content).toContain("still there?");
    // Nothing was lost: the stored history holds all of it, and the failure is noted.
    const history = await e.history("telegram:ann");
    expect(history.filter((x) => x.type === "message")).toHaveLength(17);
    expect(history.some((x) => x.type === "note" && x.code === "COMPACTION_FAILED")).toBe(true);
  });

  it("what a model agent sends over the OpenAI protocol starts from the summary, not from message 0", async () => {
    server = await startOpenAiServer(echoHandler);
    const e = await open({
      models: {
        local: { provider: "openai", baseUrl: server.baseUrl, model: "m", contextWindow: 1_000_000 },
      },
      agentOptions: { main: { model: "local" } },
    });
    await e.append("telegram:ann", messages(51));
    await e.turn(dm("what did we say?"));
    const sent = JSON.stringify(server.chatRequests().at(-1)?.messages ?? []);
    expect(sent).toContain(SUMMARY_HEADER);
    expect(sent).toContain("history message 50");
    expect(sent).toContain("what did we say?");
  });
});
