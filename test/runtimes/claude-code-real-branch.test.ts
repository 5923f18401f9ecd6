import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import type { Envelope } from "../../src/model/envelope.js";
import { type AnthropicServer, startAnthropicServer } from "../support/anthropic-server.js";
import { shippedCli, useOfflineClaude } from "../support/claude-cli.js";
import { forkAt, rewindTo } from "../support/engine-branch.js";
import { useTempDirs } from "../support/temp-dirs.js";

const CLI = shippedCli();
const tempDir = useTempDirs();
const offline = useOfflineClaude();
let engine: Engine | undefined;
let server: AnthropicServer | undefined;

afterEach(async () => {
  await engine?.close();
  engine = undefined;
  await server?.close();
  server = undefined;
});

const dm = (chat: string, text: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: chat },
  sender: { id: chat },
  text,
});

/** An engine whose agent is the real Claude Code CLI, answering `answer N` from a local Anthropic API. */
async function realClaude(): Promise<{ engine: Engine; server: AnthropicServer; said: () => string[] }> {
  let answers = 0;
  // The agent loop's requests offer tools; side requests get plain text.
  server = await startAnthropicServer((body) => {
    if (!Array.isArray(body.tools) || body.tools.length === 0) return { content: "side" };
    answers += 1;
    return { content: `answer ${answers}` };
  });
  offline(server.baseUrl, tempDir("sessiond-real-branch-home-"));
  engine = await createEngine({
    dataDir: tempDir("sessiond-real-branch-data-"),
    agentOptions: {
      main: { runtime: "claude-code", executable: CLI, cwd: tempDir("sessiond-real-branch-") },
    },
    titles: { enabled: false },
    lifecycle: { sweepIntervalMs: 0 },
  });
  const s = server;
  // What the model was sent on the latest agent-loop request, as one text.
  const said = () =>
    s
      .messageRequests()
      .filter((r) => Array.isArray(r.tools) && r.tools.length > 0)
      .map((r) => JSON.stringify(r.messages));
  return { engine, server, said };
}

describe.skipIf(CLI === undefined)(
  "runtime sessions follow a branch on the real Claude Code CLI (offline)",
  () => {
    it("a fork after the first reply: the fork's model request holds the first exchange and nothing of the second", async () => {
      const { engine: e, said } = await realClaude();
      const first = await e.turn(dm("42", "ALPHA question"));
      await e.turn(dm("42", "BETA question"));
      const parent = (await e.agents.store.get("main", first.key))?.id;
      const to = e.route(dm("43", "")).key;
      const { outcome } = await forkAt(e, first.key, first.reply?.seq ?? 0, to);
      expect(outcome.followed).toEqual(["main"]);

      const forked = await e.turn(dm("43", "GAMMA question"));
      expect(forked.reply?.content).toBe("answer 3");
      const request = said().at(-1) ?? "";
      expect(request).toContain("ALPHA question");
      expect(request).toContain("answer 1");
      expect(request).toContain("GAMMA question");
      expect(request).not.toContain("BETA question");
      expect(request).not.toContain("answer 2");
      const branch = (await e.agents.store.get("main", to))?.id;
      expect(branch).toMatch(/^[0-9a-f-]{36}$/);
      expect(branch).not.toBe(parent);

      // The parent's session is whole: its next request still holds the second exchange.
      await e.turn(dm("42", "DELTA question"));
      expect(said().at(-1)).toContain("answer 2");
      expect((await e.agents.store.get("main", first.key))?.id).toBe(parent);
    });

    it("a rewind to before the second turn: the key's next request leaves the second exchange out", async () => {
      const { engine: e, said } = await realClaude();
      const first = await e.turn(dm("42", "ALPHA question"));
      const second = await e.turn(dm("42", "BETA question"));
      await rewindTo(e, first.key, second.input?.seq ?? 0);
      await e.turn(dm("42", "GAMMA question"));
      const request = said().at(-1) ?? "";
      expect(request).toContain("answer 1");
      expect(request).not.toContain("answer 2");
      expect(request).not.toContain("BETA question");
    });
  },
);
