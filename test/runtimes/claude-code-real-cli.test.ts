import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import type { Envelope } from "../../src/model/envelope.js";
import { type AnthropicServer, startAnthropicServer } from "../support/anthropic-server.js";
import { shippedCli, useOfflineClaude } from "../support/claude-cli.js";
import { useTempDirs } from "../support/temp-dirs.js";

const CLI = shippedCli();
const KEY = "telegram:42";
const STEER = "Also say banana.";
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

function dm(text: string): Envelope {
  return { channel: "telegram", chat: { type: "direct", id: "42" }, sender: { id: "42" }, text };
}

const textOf = (content: unknown): string => JSON.stringify(content);

describe.skipIf(CLI === undefined)("steer on the real Claude Code CLI (the SDK's own, offline)", () => {
  it("a steer written while a tool call runs is folded into that turn: one reply, the steer stored before it", async () => {
    const cwd = tempDir("sessiond-real-claude-");
    writeFileSync(join(cwd, "notes.txt"), "the notes\n");
    let asked!: () => void;
    const firstRound = new Promise<void>((resolve) => {
      asked = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let rounds = 0;
    // The agent loop's requests offer tools; side requests (a title, say) get plain text.
    server = await startAnthropicServer(async (body) => {
      if (!Array.isArray(body.tools) || body.tools.length === 0) return { content: "side" };
      rounds += 1;
      if (rounds > 1) return { content: `answer ${rounds}` };
      asked();
      await released;
      return { toolUses: [{ id: "toolu_real", name: "Read", input: { file_path: join(cwd, "notes.txt") } }] };
    });
    offline(server.baseUrl, tempDir("sessiond-real-claude-home-"));
    engine = await createEngine({
      dataDir: tempDir("sessiond-real-claude-data-"),
      agentOptions: {
        main: { runtime: "claude-code", executable: CLI, cwd, queue: { mode: "steer", debounceMs: 0 } },
      },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    const e = engine;
    const a = e.turn(dm("Read notes.txt"));
    await firstRound;
    // Released once the steer is stored: the runtime writes it to the CLI's stdin in the same tick,
    // before the held round (the Read call) is even answered.
    const stored = new Promise<void>((resolve) => {
      const off = e.events.on((event) => {
        if (
          event.type !== "appended" ||
          !event.entries.some((x) => x.type === "message" && x.content === STEER)
        )
          return;
        off();
        setImmediate(() => {
          release();
          resolve();
        });
      });
    });
    const b = e.turn(dm(STEER));
    await stored;
    const [first, second] = await Promise.all([a, b]);
    expect(second.reply?.id).toBe(first.reply?.id);
    expect(first.reply?.content).toBe("answer 2");
    const history = await e.history(KEY);
    expect(history.flatMap((x) => (x.type === "message" ? [`${x.role}:${x.content}`] : []))).toEqual([
      `user:${(history[0] as { content: string }).content}`,
      `user:${STEER}`,
      "assistant:answer 2",
    ]);
    // The CLI's second round carries the steer after the Read call's tool_result, in the same user message.
    const main = server.messageRequests().filter((r) => Array.isArray(r.tools) && r.tools.length > 0);
    expect(main).toHaveLength(2);
    const last = main[1]?.messages.at(-1);
    expect(last?.role).toBe("user");
    const blocks = last?.content as Array<{ type: string }>;
    expect(blocks[0]?.type).toBe("tool_result");
    expect(textOf(blocks.slice(1))).toContain(STEER);
  });
});
