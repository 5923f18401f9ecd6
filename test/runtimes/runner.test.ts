import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine, type Envelope, isSessiondError } from "../../src/index.js";
import type { Runtime, RuntimeEvent, RuntimeRun } from "../../src/model/runtime.js";
import { describeRuntime, runnerFor, runtimeFromConfig } from "../../src/runtimes/index.js";

const dm = (text: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: "42" },
  sender: { id: "42" },
  text,
});

/** A runtime that records its run and plays back scripted events. */
function scripted(
  events: RuntimeEvent[],
  options: { throwAfter?: Error; onRun?: (run: RuntimeRun) => void } = {},
): Runtime {
  return {
    kind: "scripted",
    async *run(run) {
      options.onRun?.(run);
      for (const event of events) yield event;
      if (options.throwAfter) throw options.throwAfter;
    },
  };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("runnerFor", () => {
  let dataDir: string;
  let engine: Engine;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-runner-"));
    engine = await createEngine(
      {
        dataDir,
        titles: { enabled: false },
        lifecycle: { sweepIntervalMs: 0 },
        agentOptions: { main: { instructions: "Be brief." } },
      },
      { injectors: [() => [{ kind: "env", content: "It is Monday." }]] },
    );
  });

  afterEach(async () => {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("hands the runtime the context as role/content messages, the input, session facts and the signal", async () => {
    await engine.turnWith(dm("first"), async () => "one");
    let run: RuntimeRun | undefined;
    const controller = new AbortController();
    const runner = runnerFor(
      scripted([{ type: "text", delta: "ok" }], {
        onRun: (r) => {
          run = r;
        },
      }),
      { runtimeSessionId: (context) => `resume-${context.session.id}` },
    );
    const result = await engine.turnWith(dm("second"), runner, { signal: controller.signal });
    const session = (await engine.sessions.get("telegram:42"))!;

    expect(run).toMatchObject({ key: "telegram:42", agent: "main", input: "second" });
    expect(run!.session).toEqual({ id: session.id, entryCount: 3, approxTokens: expect.any(Number) });
    expect(run!.session.approxTokens).toBeGreaterThan(0);
    expect(run!.runtimeSessionId).toBe(`resume-${session.id}`);
    expect(run!.signal.aborted).toBe(false);
    // The turn let go of the caller's signal when it ended (aborts during a run: the tests below).
    controller.abort();
    expect(run!.signal.aborted).toBe(false);
    expect(run!.messages[0]).toEqual({ role: "system", content: "Be brief." });
    expect(run!.messages.slice(1, 3)).toEqual([
      { role: "user", content: "first" },
      { role: "assistant", content: "one" },
    ]);
    expect(run!.messages.at(-1)).toEqual({ role: "user", content: "second" });
    // The injected context is there, and every message is exactly { role, content }: no autoInjected flag.
    expect(run!.messages.some((m) => m.content.includes("It is Monday."))).toBe(true);
    for (const m of run!.messages) expect(Object.keys(m).sort()).toEqual(["content", "role"]);
    expect(result.reply?.content).toBe("ok");
  });

  it("joins deltas, collects tool calls, sums usage, adds the run's cost, records the runtime's compaction", async () => {
    const events: RuntimeEvent[] = [
      { type: "runtime_session", id: "thread-1" },
      { type: "text", delta: "Looked " },
      { type: "tool_call", id: "t1", name: "read_file", arguments: { path: "a.txt", token: "abc" } },
      { type: "tool_call", id: "t2", name: "shell", arguments: '{"cmd":"false"}', failed: true },
      { type: "usage", model: "m1", inputTokens: 100, outputTokens: 10 },
      { type: "compacted", beforeTokens: 150_000, afterTokens: 20_000 },
      { type: "text", delta: "it up." },
      { type: "usage", model: "m2", inputTokens: 50, outputTokens: 5 },
      { type: "cost", totalUsd: 9.99 },
      { type: "cost", runUsd: 0.25 },
    ];
    const forwarded: RuntimeEvent[] = [];
    const result = await engine.turnWith(
      dm("look"),
      runnerFor(scripted(events), { onEvent: (event) => void forwarded.push(event) }),
    );

    expect(forwarded).toEqual(events);
    expect(result.reply).toMatchObject({
      content: "Looked it up.",
      toolCalls: [
        { id: "t1", name: "read_file", arguments: { path: "a.txt" } },
        { id: "failed", name: "shell", arguments: { cmd: "false" } },
      ],
    });
    const history = await engine.history("telegram:42");
    expect(history.map((e) => e.type)).toEqual(["message", "message", "usage", "note"]);
    expect(history[2]).toMatchObject({
      type: "usage",
      model: "m2",
      inputTokens: 150,
      outputTokens: 15,
      costUsd: 0.25,
    });
    expect(history[3]).toMatchObject({ type: "note", code: "RUNTIME_COMPACTED" });
    expect(history[3]?.type === "note" && history[3].text).toContain("150,000 to 20,000");
  });

  it("a reply with no usage, cost or tool calls stores only the message", async () => {
    await engine.turnWith(dm("hi"), runnerFor(scripted([{ type: "text", delta: "hello" }])));
    const history = await engine.history("telegram:42");
    expect(history.map((e) => e.type)).toEqual(["message", "message"]);
    expect(history[1]).not.toHaveProperty("toolCalls");
  });

  it("a runtime's error fails the turn; after an abort any error is a cancellation", async () => {
    const broken = await failure(
      engine.turnWith(
        dm("a"),
        runnerFor(scripted([{ type: "text", delta: "x" }], { throwAfter: new Error("boom") })),
      ),
    );
    expect(isSessiondError(broken, "TURN_FAILED")).toBe(true);
    expect((broken as Error).message).toContain("boom");

    const controller = new AbortController();
    const runner = runnerFor(
      scripted([{ type: "text", delta: "x" }], { throwAfter: new Error("socket hang up") }),
      { onEvent: () => controller.abort() },
    );
    const cancelled = await failure(engine.turnWith(dm("b"), runner, { signal: controller.signal }));
    expect(isSessiondError(cancelled, "TURN_CANCELLED")).toBe(true);

    const history = await engine.history("telegram:42");
    expect(history.filter((e) => e.type === "message").map((e) => e.role)).toEqual(["user", "user"]);
    expect(history.filter((e) => e.type === "note").map((e) => (e.type === "note" ? e.code : ""))).toEqual([
      "TURN_FAILED",
      "TURN_CANCELLED",
    ]);
  });

  it("stops reading the runtime once the turn is aborted", async () => {
    const controller = new AbortController();
    let pulled = 0;
    const endless: Runtime = {
      kind: "endless",
      async *run() {
        for (;;) {
          pulled++;
          yield { type: "text", delta: "x" };
          await new Promise((resolve) => setImmediate(resolve));
        }
      },
    };
    const runner = runnerFor(endless, {
      onEvent: () => {
        if (pulled === 3) controller.abort();
      },
    });
    const error = await failure(engine.turnWith(dm("go"), runner, { signal: controller.signal }));
    expect(isSessiondError(error, "TURN_CANCELLED")).toBe(true);
    expect(pulled).toBe(4);
  });
});

describe("runtimeFromConfig and describeRuntime", () => {
  it("echo without a model, the model runtime with one", () => {
    const echo = runtimeFromConfig(undefined);
    expect(echo.kind).toBe("echo");
    expect(describeRuntime(echo)).toContain("no model configured");

    const model = runtimeFromConfig({ provider: "openai", model: "gpt-test", contextWindow: 8192 });
    expect(model.kind).toBe("model");
    expect(describeRuntime(model)).toBe(
      "model (openai gpt-test at https://api.openai.com/v1, context window 8,192 tokens)",
    );
    const claude = runtimeFromConfig({ provider: "anthropic", model: "claude-x", apiKey: "sk-ant-x" });
    expect(describeRuntime(claude)).toBe("model (anthropic claude-x)");
  });

  it("fails at start-up when the key's variable is unset, naming the variable and no value", () => {
    const name = "SESSIOND_TEST_UNSET_KEY_VAR";
    delete process.env[name];
    let error: unknown;
    try {
      runtimeFromConfig({ provider: "anthropic", model: "claude-x", apiKeyEnv: name });
    } catch (e) {
      error = e;
    }
    expect(isSessiondError(error, "INVALID_ARGUMENT")).toBe(true);
    expect((error as Error).message).toContain(name);
    expect(() => runtimeFromConfig({ provider: "openai", model: "m", baseUrl: "ftp://x" })).toThrow(
      /baseUrl/,
    );
  });

  it("a runtime without a description is named by its kind", () => {
    expect(describeRuntime(scripted([]))).toBe("scripted");
  });
});
