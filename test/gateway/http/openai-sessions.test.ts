import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenAiServer, startOpenAiServer } from "../../support/openai-server.js";
import { startTestGateway, type TestGateway, TOKEN } from "./helpers.js";

const KEY_ENV = "SESSIOND_TEST_OPENAI_SESSIONS_KEY";
const IP = "127.0.0.1";
let upstream: OpenAiServer;
let gw: TestGateway;
let dbDir: string;

beforeAll(async () => {
  process.env[KEY_ENV] = "sk-upstream-secret";
  upstream = await startOpenAiServer();
  dbDir = mkdtempSync(join(tmpdir(), "sessiond-openai-sessions-"));
  gw = await startTestGateway({
    store: { backend: "sqlite", path: join(dbDir, "sessiond.db") },
    models: {
      upstream: { provider: "openai", baseUrl: upstream.baseUrl, model: "test-model", apiKeyEnv: KEY_ENV },
    },
    agentOptions: { main: { model: "upstream" } },
  });
});
afterAll(async () => {
  await gw.stop();
  await upstream.close();
  rmSync(dbDir, { recursive: true, force: true });
  delete process.env[KEY_ENV];
});

function client(headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: TOKEN, maxRetries: 0, defaultHeaders: headers });
}

/** One chat as a client UI holds it: every request sends the whole conversation, then keeps the reply. */
class Chat {
  readonly messages: ChatCompletionMessageParam[] = [];
  constructor(
    private readonly openai: OpenAI,
    private readonly stream: boolean,
    private readonly user?: string,
  ) {}

  async say(text: string): Promise<string> {
    this.messages.push({ role: "user", content: text });
    const request = {
      model: "main",
      messages: this.messages,
      ...(this.user ? { user: this.user } : {}),
    };
    let reply = "";
    if (this.stream) {
      const stream = await this.openai.chat.completions.create({ ...request, stream: true });
      for await (const chunk of stream) reply += chunk.choices[0]?.delta.content ?? "";
    } else {
      const completion = await this.openai.chat.completions.create(request);
      reply = completion.choices[0]?.message.content ?? "";
    }
    this.messages.push({ role: "assistant", content: reply });
    return reply;
  }
}

/** The contents the agent's model was sent on the last turn. */
function lastSeen(): unknown[] {
  return (
    upstream
      .chatRequests()
      .at(-1)
      ?.messages.map((m) => m.content) ?? []
  );
}

async function generations(key: string): Promise<Array<{ generation: number; resetCause?: string }>> {
  const sessions = await gw.engine.sessions.generations(key);
  const out = [];
  for (const session of sessions) {
    const entries = await gw.engine.store.readEntries(session.id, {});
    const reset = entries.find((e) => e.type === "reset");
    out.push({
      generation: session.generation,
      ...(reset?.type === "reset" ? { resetCause: reset.cause } : {}),
    });
  }
  return out.sort((a, b) => a.generation - b.generation);
}

async function userTexts(key: string): Promise<string[]> {
  return (await gw.engine.history(key))
    .filter((e) => e.type === "message" && e.role === "user")
    .map((e) => (e.type === "message" ? e.content : ""));
}

describe.each([
  { stream: false, name: "non-streaming" },
  { stream: true, name: "streaming" },
])("OpenAI-compatible session separation ($name)", ({ stream }) => {
  const tag = stream ? "s" : "j";

  it("keeps two chats from one IP apart by the user field", async () => {
    const alice = new Chat(client(), stream, `alice-${tag}`);
    const bob = new Chat(client(), stream, `bob-${tag}`);
    await alice.say("alice one");
    await bob.say("bob one");
    await alice.say("alice two");
    expect(lastSeen()).toContain("alice one");
    expect(lastSeen()).not.toContain("bob one");
    await bob.say("bob two");
    expect(lastSeen()).not.toContain("alice one");
    expect(await userTexts(`openai-compat:${IP}:alice-${tag}`)).toEqual(["alice one", "alice two"]);
    expect(await userTexts(`openai-compat:${IP}:bob-${tag}`)).toEqual(["bob one", "bob two"]);
    expect(await generations(`openai-compat:${IP}:alice-${tag}`)).toEqual([{ generation: 1 }]);
  });

  it("keeps two chats apart by the X-Sessiond-Session header, which wins over user", async () => {
    const left = new Chat(client({ "X-Sessiond-Session": `left-${tag}` }), stream, `ignored-${tag}`);
    const right = new Chat(client({ "X-Sessiond-Session": `right-${tag}` }), stream);
    await left.say("left one");
    await right.say("right one");
    await left.say("left two");
    expect(lastSeen()).not.toContain("right one");
    expect(await userTexts(`openai-compat:${IP}:left-${tag}`)).toEqual(["left one", "left two"]);
    expect(await userTexts(`openai-compat:${IP}:right-${tag}`)).toEqual(["right one"]);
    expect(await gw.engine.sessions.get(`openai-compat:${IP}:ignored-${tag}`)).toBeUndefined();
  });

  it("continues a chat, resets for a new one (cause client) and for an edited earlier message", async () => {
    const key = `openai-compat:${IP}:reset-${tag}`;
    const openai = client();
    const first = new Chat(openai, stream, `reset-${tag}`);
    await first.say("first one");
    await first.say("first two");
    expect(await generations(key)).toEqual([{ generation: 1 }]);

    const fresh = new Chat(openai, stream, `reset-${tag}`);
    await fresh.say("new chat");
    expect(lastSeen()).not.toContain("first one");
    expect(await generations(key)).toEqual([{ generation: 1, resetCause: "client" }, { generation: 2 }]);
    await fresh.say("new chat two");
    expect(lastSeen()).toContain("new chat");
    expect((await generations(key)).length).toBe(2);

    // The client edits its first message and sends the conversation again.
    fresh.messages[0] = { role: "user", content: "new chat, edited" };
    await fresh.say("after the edit");
    expect(lastSeen()).not.toContain("new chat two");
    expect(await generations(key)).toEqual([
      { generation: 1, resetCause: "client" },
      { generation: 2, resetCause: "client" },
      { generation: 3 },
    ]);
    expect(await userTexts(key)).toEqual(["after the edit"]);
  });
});

describe("what counts as continuing", () => {
  it("keeps the per-IP key without a name, and a continuing chat there", async () => {
    const chat = new Chat(client(), false);
    await chat.say("plain one");
    await chat.say("plain two");
    expect(await userTexts(`openai-compat:${IP}`)).toEqual(["plain one", "plain two"]);
    expect(await generations(`openai-compat:${IP}`)).toEqual([{ generation: 1 }]);
  });

  it("ignores system messages, line endings and outer whitespace, and a bare /new in the client's copy", async () => {
    const key = `openai-compat:${IP}:normalised`;
    const chat = new Chat(client(), false, "normalised");
    chat.messages.push({ role: "system", content: "you are helpful" });
    await chat.say("line one\nline two");
    await chat.say("/new");
    await chat.say("after\nnew");
    expect(await generations(key)).toEqual([{ generation: 1, resetCause: "trigger" }, { generation: 2 }]);
    chat.messages[5] = { role: "user", content: "  after\r\nnew  " };
    chat.messages.splice(3, 0, { role: "system", content: "a late system message" });
    await chat.say("still the same chat");
    expect(await generations(key)).toEqual([{ generation: 1, resetCause: "trigger" }, { generation: 2 }]);
    expect(await userTexts(key)).toEqual(["after\nnew", "still the same chat"]);
  });

  it("takes compaction into account: the client's longer copy still continues", async () => {
    const compacting = await startTestGateway({
      store: { backend: "sqlite", path: join(dbDir, "compacting.db") },
      compaction: { maxMessages: 4, keepRecent: 2 },
    });
    try {
      const key = `openai-compat:${IP}:compacted`;
      const openai = new OpenAI({ baseURL: `${compacting.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
      const chat = new Chat(openai, false, "compacted");
      for (const n of [1, 2, 3, 4, 5]) await chat.say(`turn ${n}`);
      const context = await compacting.engine.context(key);
      expect(context?.summary).toBeDefined();
      expect(context?.session.generation).toBe(1);
      expect((await compacting.engine.sessions.generations(key)).length).toBe(1);
    } finally {
      await compacting.stop();
    }
  });

  it("refuses a path-like, overlong or control-character session name with a clear 400", async () => {
    const openai = client();
    const bad = async (user: string) => {
      const error: unknown = await openai.chat.completions
        .create({ model: "main", user, messages: [{ role: "user", content: "x" }] })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, error: { code: "INVALID_KEY" } });
      return (error as { error: { message: string } }).error.message;
    };
    expect(await bad("../etc/passwd")).toMatch(/^user .*: a name, not a path$/);
    expect(await bad("a\\b")).toMatch(/a name, not a path/);
    expect(await bad("..")).toMatch(/a name, not a path/);
    expect(await bad("x".repeat(129))).toMatch(/longer than 128 UTF-8 bytes/);
    expect(await bad("a\u0001b")).toMatch(/control character U\+0001/);
    const res = await gw.api("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", "x-sessiond-session": "a/b" },
      body: JSON.stringify({ messages: [{ role: "user", content: "x" }] }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toMatch(/X-Sessiond-Session header .*a name, not a path/);
    const listed = await gw.engine.sessions.list({});
    expect(listed.sessions.map((s) => s.key).filter((k) => k.includes("etc"))).toEqual([]);
  });
});
