import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine.js";
import { atEvent, dm, KEY, steerEngine, transcript } from "../support/claude-steer.js";
import { useFakeCliState } from "../support/fake-clis.js";
import { useTempDirs } from "../support/temp-dirs.js";

const claude = useFakeCliState("FAKE_CLAUDE_STATE");
// Registered before the engine's close: after-hooks run in reverse, so the directories go once it closed.
const tempDir = useTempDirs();
let engine: Engine | undefined;

async function open(): Promise<Engine> {
  engine = await steerEngine(tempDir);
  return engine;
}

afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

interface Call {
  prompt: string;
  folded: string[];
  priorities: Array<string | null>;
  sessionId: string;
}

describe("steer on Claude Code: steers go to the running CLI through its streaming input", () => {
  it("folds them into the running turn at its tool boundary: one reply, stored after them in order", async () => {
    const e = await open();
    const { turn: a } = await atEvent(e, "[hold=2] look at the README", "tool_call");
    const b = e.turn(dm("B: check the tests too"));
    const c = e.turn(dm("C: and the changelog"));
    const [first, second, third] = await Promise.all([a, b, c]);
    // The fake CLI folded both at its tool boundary, in the order they were written, into one turn.
    expect(claude.calls<Call>().map((call) => call.folded)).toEqual([
      ["B: check the tests too", "C: and the changelog"],
    ]);
    expect(claude.calls<Call>()[0]?.priorities).toEqual(["next", "next"]);
    expect(second.reply?.id).toBe(first.reply?.id);
    expect(third.reply?.id).toBe(first.reply?.id);
    expect(transcript(await e.history(KEY))).toEqual([
      "user:[hold=2] look at the README",
      "user:B: check the tests too",
      "user:C: and the changelog",
      "assistant:turn 1 heard B: check the tests too | C: and the changelog",
    ]);
    expect(e.queue.list()).toEqual([]);
    // The next turn resumes the session and sends only what came after this reply.
    await e.turn(dm("D"));
    const calls = claude.calls<Call>();
    expect(calls).toHaveLength(2);
    expect(calls[1]?.sessionId).toBe(calls[0]?.sessionId);
    expect(calls[1]?.prompt).toMatch(/\(1 message, oldest first\):\n\n\[42\] D$/);
  });

  it("one the CLI could not fold (no tool call left) is its next turn in the same run, part of the reply", async () => {
    const e = await open();
    const { turn: a } = await atEvent(e, "[hold-text] [total=2] hello", "runtime_session");
    const b = e.turn(dm("B: one more thing"));
    const [first, second] = await Promise.all([a, b]);
    const calls = claude.calls<Call>();
    // Two CLI turns in one process (one session), nothing folded: B ran after the first answer.
    expect(calls.map((call) => call.folded)).toEqual([[], []]);
    expect(calls[1]?.prompt).toBe("B: one more thing");
    expect(new Set(calls.map((call) => call.sessionId)).size).toBe(1);
    expect(second.reply?.id).toBe(first.reply?.id);
    expect(transcript(await e.history(KEY)).slice(0, 2)).toEqual([
      "user:[hold-text] [total=2] hello",
      "user:B: one more thing",
    ]);
    expect(first.reply?.content).toMatch(/^turn 1 of .+turn 2 of /);
    // The run's cost is the CLI's last running total (2, then +1 for B's turn).
    expect(await e.agents.store.costOf("main", KEY, first.input?.id ?? "")).toEqual({
      status: "priced",
      usd: 3,
    });
  });
});
