import { mkdtempSync, readFileSync } from "node:fs";
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

/** The fake CLI's transcript of a session: its entries' uuids, with the turns each completes. */
function chainOf(sessionId: string | undefined): Array<{ uuid: string; turns: number }> {
  return (
    JSON.parse(readFileSync(join(state.dir, `session-${sessionId}.json`), "utf8")) as {
      chain: Array<{ uuid: string; turns: number }>;
    }
  ).chain;
}

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
    // As the CLI reported them, cache counts included (for the cost ledger).
    expect(events).toContainEqual({
      type: "usage",
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(events.at(-2)).toEqual({ type: "cost", totalUsd: 1 });
    // Last, the checkpoint: the uuid of the turn's last transcript entry, its answer.
    expect(events.at(-1)).toEqual({ type: "checkpoint", id: chainOf(call?.sessionId).at(-1)?.uuid });
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
    expect(second.at(-2)).toEqual({ type: "cost", totalUsd: 2 });
  });

  it("a run given a checkpoint resumes with --fork-session at it: a new session remembering the turns up to it", async () => {
    const runtime = claudeCodeRuntime({ executable: FAKE_CLAUDE });
    const first = await collect(runtime.run(runOf("one")));
    const id = (first[0] as { id: string }).id;
    const at = (first.at(-1) as { id: string }).id;
    await collect(runtime.run(runOf("two", { runtimeSessionId: id })));
    const branched = await collect(runtime.run(runOf("three", { runtimeSessionId: id, resumeAt: at })));
    const call = state.calls<Call & { remembered: string[] }>()[2];
    expect(call?.argv).toEqual(
      expect.arrayContaining([`--resume=${id}`, "--fork-session", `--resume-session-at=${at}`]),
    );
    expect(call?.remembered).toEqual(["one"]);
    expect(branched[0]).toEqual({ type: "runtime_session", id: call?.sessionId });
    expect(call?.sessionId).not.toBe(id);
    // The session forked from is left as it was: resumed plainly, it remembers both turns.
    await collect(runtime.run(runOf("four", { runtimeSessionId: id })));
    expect(state.calls<Call & { remembered: string[] }>()[3]).toMatchObject({
      sessionId: id,
      remembered: ["one", "two"],
    });
    expect(state.calls<Call>()[3]?.argv).not.toContain("--fork-session");
  });

  it("fails a run whose checkpoint the session does not have, with the CLI's reason", async () => {
    const runtime = claudeCodeRuntime({ executable: FAKE_CLAUDE });
    const first = await collect(runtime.run(runOf("one")));
    const id = (first[0] as { id: string }).id;
    const gone = "00000000-0000-4000-8000-000000000000";
    await expect(
      collect(runtime.run(runOf("two", { runtimeSessionId: id, resumeAt: gone }))),
    ).rejects.toThrow(`No message found with message.uuid of: ${gone}`);
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
