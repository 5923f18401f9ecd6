import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine.js";
import type { Entry } from "../../src/model/entry.js";
import type { TurnResult } from "../../src/turns/turn.js";
import { atEvent, dm, KEY, steerEngine, transcript } from "../support/claude-steer.js";
import { useFakeCliState } from "../support/fake-clis.js";
import { useTempDirs } from "../support/temp-dirs.js";

// Older CLIs list no `user_message_uuids` in a result: the fake plays one through FAKE_CLAUDE_UUIDS.
const claude = useFakeCliState("FAKE_CLAUDE_STATE");
const tempDir = useTempDirs();
let engine: Engine | undefined;

async function open(uuids: "none" | "single"): Promise<Engine> {
  process.env.FAKE_CLAUDE_UUIDS = uuids;
  engine = await steerEngine(tempDir);
  return engine;
}

afterEach(async () => {
  await engine?.close();
  engine = undefined;
  delete process.env.FAKE_CLAUDE_UUIDS;
});

/** Gapless, every reply answering a stored user entry, no error note, and each user text stored once. */
function expectValid(history: Entry[]): void {
  expect(history.map((entry) => entry.seq)).toEqual(history.map((_, i) => i + 1));
  const ids = new Set(history.map((entry) => entry.id));
  for (const entry of history) {
    if (entry.type === "message" && entry.role === "assistant") expect(ids).toContain(entry.replyTo);
    if (entry.type === "note") expect(entry.level).not.toBe("error");
  }
  const users = history.flatMap((e) => (e.type === "message" && e.role === "user" ? [e.content] : []));
  expect(new Set(users).size).toBe(users.length);
}

interface Exit {
  code: number;
  read: number;
  consumed: number;
}

function exits(): Exit[] {
  return readFileSync(join(claude.dir, "exits.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Exit);
}

interface Call {
  prompt: string;
  folded: string[];
}

describe("Claude Code CLIs whose results list no user_message_uuids", () => {
  it("one prompt, a result without uuids: the turn completes and the CLI exits, having answered it", async () => {
    const e = await open("none");
    const result = await e.turn(dm("hello"));
    expect(result.reply?.content).toMatch(/^turn 1 of /);
    expect(exits()).toEqual([{ code: 0, read: 1, consumed: 1 }]);
    const history = await e.history(KEY);
    expect(transcript(history)).toEqual(["user:hello", "assistant:turn 1"]);
    expectValid(history);
  });

  // `single`: the result names the prompt alone; counting on it, the run awaited the folded steer forever.
  it.each(["none", "single"] as const)(
    "listing %s: a steer it folds at its tool boundary is answered by that turn's reply, stored once",
    async (uuids) => {
      const e = await open(uuids);
      let b!: Promise<TurnResult>;
      const { turn: a } = await atEvent(e, "[hold] look at the README", "tool_call", () => {
        b = e.turn(dm("B: check the tests too"));
      });
      const [first, second] = await Promise.all([a, b]);
      expect(claude.calls<Call>().map((call) => call.folded)).toEqual([["B: check the tests too"]]);
      expect(second.reply?.id).toBe(first.reply?.id);
      expect(exits()).toEqual([{ code: 0, read: 2, consumed: 2 }]);
      const history = await e.history(KEY);
      expect(transcript(history)).toEqual([
        "user:[hold] look at the README",
        "user:B: check the tests too",
        "assistant:turn 1 heard B: check the tests too",
      ]);
      expectValid(history);
    },
  );

  it("a steer written before the first result but not folded is the CLI's next turn, part of the reply", async () => {
    const e = await open("none");
    let b!: Promise<TurnResult>;
    const { turn: a } = await atEvent(e, "[hold-text] hello", "runtime_session", () => {
      b = e.turn(dm("B: one more thing"));
    });
    const [first, second] = await Promise.all([a, b]);
    // The uuid-less first result ended the input; the CLI still answered what it had queued, then exited.
    const calls = claude.calls<Call>();
    expect(calls).toHaveLength(2);
    expect(calls[0]?.prompt).toMatch(/\[42\] \[hold-text\] hello$/);
    expect(calls[1]?.prompt).toBe("B: one more thing");
    expect(exits()).toEqual([{ code: 0, read: 2, consumed: 2 }]);
    expect(second.reply?.id).toBe(first.reply?.id);
    expect(first.reply?.content).toMatch(/^turn 1 of .+turn 2 of /);
    const history = await e.history(KEY);
    expect(transcript(history).slice(0, 2)).toEqual(["user:[hold-text] hello", "user:B: one more thing"]);
    expect(transcript(history)).toHaveLength(3);
    expectValid(history);
  });

  it("a steer arriving after the uuid-less result is not written to the CLI: it runs as a follow-up turn", async () => {
    const e = await open("none");
    const later: Array<Promise<TurnResult>> = [];
    let done!: () => void;
    const sent = new Promise<void>((r) => {
      done = r;
    });
    // B is queued in the CLI when its first result comes; C arrives once the CLI answers B (its 2nd init).
    let inits = 0;
    const a = e.turn(dm("[hold-text] hello"), {
      onEvent: (event) => {
        if (event.type !== "runtime_session") return;
        inits += 1;
        if (inits === 1) later.push(e.turn(dm("B: one more thing")));
        if (inits === 2) {
          later.push(e.turn(dm("C: and the changelog")));
          done();
        }
      },
    });
    await sent;
    const [first, second, third] = await Promise.all([a, ...later]);
    expect(second?.reply?.id).toBe(first.reply?.id);
    expect(third?.reply?.id).not.toBe(first.reply?.id);
    expect(third?.reply?.content).toMatch(/^turn 3 of /);
    // Two processes: the first never read C; the follow-up run's prompt is C alone.
    expect(exits()).toEqual([
      { code: 0, read: 2, consumed: 2 },
      { code: 0, read: 1, consumed: 1 },
    ]);
    expect(claude.calls<Call>()[2]?.prompt).toMatch(/\[42\] C: and the changelog$/);
    const history = await e.history(KEY);
    expect(transcript(history)).toEqual([
      "user:[hold-text] hello",
      "user:B: one more thing",
      "assistant:turn 1 2",
      "user:C: and the changelog",
      "assistant:turn 3",
    ]);
    expectValid(history);
  });
});
