import { describe, expect, it } from "vitest";
import { createEngine } from "../../../src/engine.js";
import type { EntryInput } from "../../../src/model/entry.js";
import type { Runtime, RuntimeRun } from "../../../src/model/runtime.js";
import { sessionRunner } from "../../../src/runtimes/sessions/runner.js";
import {
  dataWith,
  forkAtOf,
  MAX_TURN_MARKS,
  marksOf,
  marksUpTo,
  REPLY_LOOKAHEAD,
  runtimeDataOf,
  type TurnMark,
} from "../../../src/runtimes/sessions/turn-marks.js";
import { openStore } from "../../../src/store/open.js";

const mark = (i: number): TurnMark => ({ sessionId: "s", inputSeq: i, runId: `r${i}`, at: `u${i}` });

describe("turn marks kept with a runtime session", () => {
  it("keeps the newest 64 marks beside the runtime's own data, which the runtime alone gets back", () => {
    const marks = Array.from({ length: MAX_TURN_MARKS + 6 }, (_, i) => mark(i + 1));
    const data = dataWith({ taskId: "t-1" }, marks, "u9");
    const kept = marksOf(data);
    expect(kept).toHaveLength(MAX_TURN_MARKS);
    expect(kept[0]?.runId).toBe("r7");
    expect(kept.at(-1)?.runId).toBe(`r${MAX_TURN_MARKS + 6}`);
    expect(forkAtOf(data)).toBe("u9");
    expect(runtimeDataOf(data)).toEqual({ taskId: "t-1" });
    expect(runtimeDataOf(dataWith(undefined, marks))).toBeUndefined();
    expect(dataWith(undefined, [])).toBeUndefined();
  });

  it("reads unreadable or malformed marks as none", () => {
    expect(marksOf({ "sessiond.turns": "{oops" })).toEqual([]);
    expect(marksOf({ "sessiond.turns": '{"a":1}' })).toEqual([]);
    expect(marksOf({ "sessiond.turns": JSON.stringify([mark(1), { sessionId: 3 }]) })).toEqual([mark(1)]);
    expect(marksOf(undefined)).toEqual([]);
  });

  it("keeps the turns whose reply is at or before the branch point, found by replyTo, relabelled with their reply seq", async () => {
    const store = await openStore({ backend: "memory" });
    const init = { agent: "dev", channel: "telegram", chatType: "direct" as const, createdBy: "42" };
    const say = async (entries: EntryInput[]) => (await store.append("k", entries, { init })).entries;
    const [one] = await say([{ type: "message", role: "user", content: "one" }]);
    await say([{ type: "message", role: "assistant", content: "1", replyTo: one?.id }]);
    const [two] = await say([{ type: "message", role: "user", content: "two" }]);
    // More than the lookahead between an input and its reply: that reply is not looked for further.
    const filler = Array.from(
      { length: REPLY_LOOKAHEAD },
      () => ({ type: "message", role: "user", content: "x" }) as const,
    );
    await say(filler);
    const [late] = await say([{ type: "message", role: "assistant", content: "2", replyTo: two?.id }]);
    const sessionId = one?.sessionId as string;
    const marks = [one, two].map((input, i) => ({
      sessionId,
      inputSeq: input?.seq as number,
      runId: input?.id as string,
      at: `u${i + 1}`,
    }));
    const origin = { key: "k", sessionId, seq: late?.seq as number };
    expect(await marksUpTo(marks, origin, "fork-1", store)).toEqual([
      { ...marks[0], sessionId: "fork-1", replySeq: 2 },
    ]);
    // Before the first reply, nothing; another session's marks never count.
    expect(await marksUpTo(marks, { ...origin, seq: 1 }, "fork-1", store)).toEqual([]);
    expect(await marksUpTo(marks, { ...origin, sessionId: "other" }, "fork-1", store)).toEqual([]);
    await store.close();
  });
});

describe("turn marks kept by the session runner", () => {
  /** A runtime of kind claude-code reporting, per run, the session id it is given and a checkpoint. */
  function scripted(ids: string[]): { runtime: Runtime; runs: RuntimeRun[] } {
    const runs: RuntimeRun[] = [];
    const runtime: Runtime = {
      kind: "claude-code",
      async *run(run) {
        runs.push(run);
        yield { type: "runtime_session", id: ids[runs.length - 1] as string };
        yield { type: "text", delta: "ok" };
        yield { type: "checkpoint", id: `u${runs.length}` };
      },
    };
    return { runtime, runs };
  }

  it("adds one mark per answered run, and drops them when the runtime reports a session that is not the one resumed", async () => {
    const engine = await createEngine({ store: { backend: "memory" }, titles: { enabled: false } });
    try {
      const { runtime, runs } = scripted(["cc-1", "cc-1", "cc-2"]);
      const say = (text: string) =>
        engine.turnWith(
          { channel: "telegram", chat: { type: "direct", id: "1" }, sender: { id: "1" }, text },
          sessionRunner(runtime, engine.agents.store, { agents: ["main"] }),
        );
      const first = await say("one");
      const second = await say("two");
      const marked = await engine.agents.store.get("main", first.key);
      // The first run's reply was in the second run's context: its seq is kept, the newest is looked up later.
      expect(marksOf(marked?.data).map((m) => [m.at, m.inputSeq, m.runId, m.replySeq])).toEqual([
        ["u1", first.input?.seq, first.input?.id, first.reply?.seq],
        ["u2", second.input?.seq, second.input?.id, undefined],
      ]);
      // The runtime never sees sessiond's keys.
      expect(runs[1]?.runtimeSessionData).toBeUndefined();
      expect(runs[1]?.resumeAt).toBeUndefined();
      await say("three");
      expect(marksOf((await engine.agents.store.get("main", first.key))?.data).map((m) => m.at)).toEqual([
        "u3",
      ]);
    } finally {
      await engine.close();
    }
  });
});
