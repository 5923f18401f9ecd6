import { describe, expect, it } from "vitest";
import type { RuntimeEvent } from "../../src/model/runtime.js";
import { a2aRuntime } from "../../src/runtimes/a2a.js";
import { startA2aAgent } from "../support/a2a-server.js";
import { useServer } from "../support/http-server.js";
import { collect, runsOf } from "../support/runtime-run.js";

const agent = useServer(startA2aAgent);

const runOf = runsOf("discord:dm:1", "remote");

function sessionOf(events: RuntimeEvent[]) {
  return events.filter((e) => e.type === "runtime_session").at(-1) as
    | { id: string; data?: Record<string, string> }
    | undefined;
}

describe("a2a runtime (the A2A SDK client against a local A2A server)", () => {
  it("opens one remote context, sends the instructions only with the first message, and continues the context", async () => {
    const runtime = a2aRuntime({ url: agent.url, instructions: "You are the billing agent." });
    const first = await collect(runtime.run(runOf("hello")));
    const context = sessionOf(first);
    expect(context?.id).toMatch(/.+/);
    expect(context?.data).toBeUndefined();
    expect(first).toContainEqual({ type: "text", delta: "a2a turn 1: You are the billing agent.\n\nhello" });

    const second = await collect(runtime.run(runOf("again", { runtimeSessionId: context?.id ?? "" })));
    expect(second).toContainEqual({ type: "text", delta: "a2a turn 2: again" });
    expect(agent.requests.map((r) => [r.contextId, r.text])).toEqual([
      [context?.id, "You are the billing agent.\n\nhello"],
      [context?.id, "again"],
    ]);
  });

  it("keeps the task id only while the task waits for input, and drops it once the task is done", async () => {
    const runtime = a2aRuntime({ url: agent.url });
    const asked = await collect(runtime.run(runOf("[need-input] fix the bug")));
    const waiting = sessionOf(asked);
    expect(asked).toContainEqual({ type: "text", delta: "Which file?" });
    expect(waiting?.data?.taskId).toMatch(/.+/);

    const answered = await collect(
      runtime.run(
        runOf("main.ts", { runtimeSessionId: waiting?.id ?? "", runtimeSessionData: waiting?.data ?? {} }),
      ),
    );
    expect(agent.requests[1]).toMatchObject({ taskId: waiting?.data?.taskId, continuedTask: true });
    expect(answered).toContainEqual({ type: "text", delta: "done with main.ts" });
    const after = sessionOf(answered);
    expect(after).toEqual({ type: "runtime_session", id: waiting?.id });
  });

  it("fails the run when the remote task fails", async () => {
    const runtime = a2aRuntime({ url: agent.url });
    await expect(collect(runtime.run(runOf("[fail] now")))).rejects.toThrow(/TASK_STATE_FAILED: tool broke/);
  });
});
