import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { claudeCodeRuntime } from "../../src/runtimes/claude-code.js";
import { FAKE_CLAUDE, useFakeCliState } from "../support/fake-clis.js";
import { collect, runsOf } from "../support/runtime-run.js";

const state = useFakeCliState("FAKE_CLAUDE_STATE");

interface Call {
  argv: string[];
  cwd: string;
  model?: string;
  resume?: string;
  appendSystemPrompt?: string;
  prompt: string;
  sessionId: string;
}

const runOf = runsOf("telegram:1", "dev");

describe("claude-code runtime (the Agent SDK driving a local stream-json CLI)", () => {
  it("starts a session in the agent's directory with its model and instructions, and reports id, text, tools, usage and the running total", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "sessiond-agent-"));
    const runtime = claudeCodeRuntime({
      executable: FAKE_CLAUDE,
      cwd,
      model: "sonnet",
      instructions: "Be brief.",
    });
    const events = await collect(runtime.run(runOf("hello", { prompt: "New activity: hello" })));
    const [call] = state.calls<Call>();
    expect(call).toMatchObject({
      cwd,
      model: "sonnet",
      appendSystemPrompt: "Be brief.",
      prompt: "New activity: hello",
    });
    expect(call?.resume).toBeUndefined();
    expect(events[0]).toEqual({ type: "runtime_session", id: call?.sessionId });
    expect(events).toContainEqual({
      type: "tool_call",
      id: "toolu_1",
      name: "Read",
      arguments: { file_path: "README.md" },
    });
    expect(events).toContainEqual({
      type: "text",
      delta: `turn 1 of ${call?.sessionId.slice(0, 8)} in ${cwd}`,
    });
    expect(events).toContainEqual({ type: "usage", inputTokens: 10, outputTokens: 5 });
    expect(events.at(-1)).toEqual({ type: "cost", totalUsd: 1 });
  });

  it("resumes the stored session id: the same session continues and its total keeps running", async () => {
    const runtime = claudeCodeRuntime({ executable: FAKE_CLAUDE });
    const first = await collect(runtime.run(runOf("one")));
    const id = (first[0] as { id: string }).id;
    const second = await collect(runtime.run(runOf("two", { runtimeSessionId: id })));
    expect(state.calls<Call>()[1]).toMatchObject({ resume: id, sessionId: id });
    expect(second).toContainEqual({
      type: "text",
      delta: expect.stringContaining(`turn 2 of ${id.slice(0, 8)}`),
    });
    expect(second.at(-1)).toEqual({ type: "cost", totalUsd: 2 });
  });

  it("reports Claude Code's own compaction with its token counts", async () => {
    const runtime = claudeCodeRuntime({ executable: FAKE_CLAUDE });
    const events = await collect(runtime.run(runOf("[compact] go on")));
    expect(events).toContainEqual({ type: "compacted", beforeTokens: 150000, afterTokens: 12000 });
  });

  it("fails a run whose session cannot be resumed, with the CLI's reason", async () => {
    const runtime = claudeCodeRuntime({ executable: FAKE_CLAUDE });
    await expect(collect(runtime.run(runOf("hi", { runtimeSessionId: "gone-1234" })))).rejects.toThrow(
      "No conversation found with session ID: gone-1234",
    );
  });
});
