import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine, type Envelope, isSessiondError, type Session } from "../../src/index.js";
import type { RuntimeEvent, RuntimeRun } from "../../src/model/runtime.js";
import { describeRuntime, ECHO_LABEL, echoRuntime, runnerFor } from "../../src/runtimes/index.js";

const dm = (text: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: "42" },
  sender: { id: "42" },
  text,
});

function runOf(overrides: Partial<RuntimeRun> = {}): RuntimeRun {
  return {
    key: "telegram:42",
    agent: "main",
    messages: [{ role: "user", content: "hi" }],
    input: "hi",
    session: { id: "s1", entryCount: 1, approxTokens: 1 },
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe("echoRuntime", () => {
  it("streams a labelled reply in several deltas", async () => {
    const deltas: string[] = [];
    for await (const event of echoRuntime().run(runOf({ input: 'say "x"' }))) {
      if (event.type === "text") deltas.push(event.delta);
    }
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(
      `${ECHO_LABEL} You said: "say \\"x\\"". Session telegram:42: 1 entry, ~1 tokens.`,
    );
  });

  it("stops at an abort between deltas", async () => {
    const controller = new AbortController();
    const seen: RuntimeEvent[] = [];
    const consume = async () => {
      for await (const event of echoRuntime().run(runOf({ signal: controller.signal }))) {
        seen.push(event);
        controller.abort();
      }
    };
    const error = await consume().catch((e: unknown) => e);
    expect(isSessiondError(error, "TURN_CANCELLED")).toBe(true);
    expect(seen).toHaveLength(1);
  });

  it("describes itself as offline", () => {
    expect(describeRuntime(echoRuntime())).toMatch(/^echo .*no model configured/);
  });
});

describe("echo through the engine", () => {
  let dataDir: string;
  let engine: Engine;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-echo-"));
    engine = await createEngine({ dataDir, titles: { enabled: false }, lifecycle: { sweepIntervalMs: 0 } });
  });

  afterEach(async () => {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("replies with the input and the session's facts, labelled, and the reply is stored", async () => {
    await engine.turnWith(dm("first"), runnerFor(echoRuntime()));
    let seen: Session | undefined;
    const deltas: string[] = [];
    const runner = runnerFor(echoRuntime(), {
      onEvent: (event) => {
        if (event.type === "text") deltas.push(event.delta);
      },
    });
    const result = await engine.turnWith(dm("what is 2+2?"), async (context) => {
      seen = context.session;
      return runner(context);
    });

    // Two entries from the first turn, then this input: the echo sees 3.
    expect(seen!.entryCount).toBe(3);
    expect(seen!.approxTokens).toBeGreaterThan(0);
    const expected = `${ECHO_LABEL} You said: "what is 2+2?". Session telegram:42: 3 entries, ~${seen!.approxTokens} tokens.`;
    expect(result.reply?.content).toBe(expected);
    expect(deltas.join("")).toBe(expected);
    const history = await engine.history("telegram:42");
    const stored = history.map((e) => (e.type === "message" ? `${e.role}:${e.content}` : e.type));
    expect(stored).toHaveLength(4);
    expect(stored.slice(2)).toEqual(["user:what is 2+2?", `assistant:${expected}`]);
    expect(stored[1]).toMatch(
      /^assistant:\[echo runtime — no model configured\] You said: "first"\. Session telegram:42: 1 entry, ~\d+ tokens\.$/,
    );
  });

  it("an abort mid-reply cancels the turn and stores no reply", async () => {
    const controller = new AbortController();
    const runner = runnerFor(echoRuntime(), { onEvent: () => controller.abort() });
    const error = await engine
      .turnWith(dm("hello"), runner, { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(isSessiondError(error, "TURN_CANCELLED")).toBe(true);
    const history = await engine.history("telegram:42");
    expect(history.filter((e) => e.type === "message" && e.role === "assistant")).toEqual([]);
    expect(history.at(-1)).toMatchObject({ type: "note", code: "TURN_CANCELLED" });
  });
});
