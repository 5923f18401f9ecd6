import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { codexRuntime } from "../../src/runtimes/codex.js";
import { FAKE_CODEX, useFakeCliState } from "../support/fake-clis.js";
import { collect, runsOf } from "../support/runtime-run.js";

const state = useFakeCliState("FAKE_CODEX_STATE");

interface Call {
  argv: string[];
  model?: string;
  cd?: string;
  resume?: string;
  prompt: string;
  threadId: string;
}

const runOf = runsOf("slack:C1", "coder");

describe("codex runtime (the Codex SDK driving a local `codex exec --experimental-json`)", () => {
  it("starts a thread in the agent's directory with its model, the instructions before the first prompt", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "sessiond-agent-"));
    const runtime = codexRuntime({
      executable: FAKE_CODEX,
      cwd,
      model: "gpt-5-codex",
      instructions: "You review code.",
    });
    const events = await collect(runtime.run(runOf("hi", { prompt: "New activity: hi" })));
    const [call] = state.calls<Call>();
    expect(call).toMatchObject({
      cd: cwd,
      model: "gpt-5-codex",
      prompt: "You review code.\n\nNew activity: hi",
    });
    expect(call?.resume).toBeUndefined();
    expect(events[0]).toEqual({ type: "runtime_session", id: call?.threadId });
    expect(events).toContainEqual({
      type: "tool_call",
      id: "item_0",
      name: "command",
      arguments: { command: "ls" },
    });
    expect(events).toContainEqual({ type: "text", delta: `codex turn 1 of ${call?.threadId.slice(0, 8)}` });
    expect(events).toContainEqual({
      type: "usage",
      inputTokens: 20,
      outputTokens: 7,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(events.some((e) => e.type === "cost")).toBe(false);
  });

  it("resumes the stored thread without repeating the instructions", async () => {
    const runtime = codexRuntime({ executable: FAKE_CODEX, instructions: "You review code." });
    const first = await collect(runtime.run(runOf("one")));
    const id = (first[0] as { id: string }).id;
    const second = await collect(runtime.run(runOf("two", { runtimeSessionId: id })));
    expect(state.calls<Call>()[1]).toMatchObject({ resume: id, prompt: "two", threadId: id });
    expect(second).toContainEqual({ type: "text", delta: `codex turn 2 of ${id.slice(0, 8)}` });
  });

  it("fails a run whose thread cannot be resumed", async () => {
    const runtime = codexRuntime({ executable: FAKE_CODEX });
    await expect(collect(runtime.run(runOf("hi", { runtimeSessionId: "gone-1" })))).rejects.toThrow(
      "thread gone-1 not found",
    );
  });
});
