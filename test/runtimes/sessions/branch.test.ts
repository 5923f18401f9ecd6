import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EngineConfig } from "../../../src/config/engine-config.js";
import { createEngine, type Engine } from "../../../src/engine.js";
import type { Entry } from "../../../src/model/entry.js";
import type { Envelope } from "../../../src/model/envelope.js";
import { forkAt, rewindTo } from "../../support/engine-branch.js";
import { FAKE_CLAUDE, useFakeCliState } from "../../support/fake-clis.js";
import { useTempDirs } from "../../support/temp-dirs.js";

const claude = useFakeCliState("FAKE_CLAUDE_STATE");
const tempDir = useTempDirs();

interface Call {
  argv: string[];
  resume?: string;
  resumeAt?: string;
  fork: boolean;
  remembered: string[];
  prompt: string;
  sessionId: string;
}

let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

async function open(): Promise<Engine> {
  const config: EngineConfig = {
    dataDir: tempDir("sessiond-branch-"),
    agents: ["dev"],
    defaultAgent: "dev",
    agentOptions: { dev: { runtime: "claude-code", executable: FAKE_CLAUDE, cwd: tempDir("sessiond-cwd-") } },
    lifecycle: { sweepIntervalMs: 0 },
    titles: { enabled: false },
  };
  engine = await createEngine(config);
  return engine;
}

const dm = (chat: string, text: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: chat },
  sender: { id: chat },
  text,
});

/** The seq of the assistant reply to the nth user message (1-based) of a history. */
function replySeq(history: Entry[], nth: number): number {
  const inputs = history.filter((e) => e.type === "message" && e.role === "user");
  const input = inputs[nth - 1];
  const reply = history.find((e) => e.type === "message" && e.replyTo === input?.id);
  if (!reply) throw new Error(`no reply to user message ${nth}`);
  return reply.seq;
}

/** Two answered turns on chat 42: the parent's Claude Code session and its history. */
async function twoTurns(e: Engine) {
  const first = await e.turn(dm("42", "alpha"));
  await e.turn(dm("42", "beta"));
  const parent = await e.agents.store.get("dev", first.key);
  return { key: first.key, parent: parent?.id as string, history: await e.history(first.key) };
}

const notes = (history: Entry[]) =>
  history.flatMap((e) => (e.type === "note" && e.code === "RUNTIME_SESSIONS_CLEARED" ? [e.text] : []));

describe("runtime sessions follow a fork or rewind (engine, the Agent SDK, a local stream-json CLI)", () => {
  it("a fork after the first reply: the fork's next run forks the Claude Code session at that turn's last entry; the parent goes on unchanged", async () => {
    const e = await open();
    const { key, parent, history } = await twoTurns(e);
    const at = replySeq(history, 1);
    const fork = e.route(dm("43", "")).key;
    const { outcome } = await forkAt(e, key, at, fork);
    expect(outcome).toEqual({ followed: ["dev"], cleared: [] });

    const result = await e.turn(dm("43", "gamma"));
    const call = claude.calls<Call>().at(-1) as Call;
    expect(call.argv).toContain("--fork-session");
    expect(call.argv).toContain(`--resume=${parent}`);
    // The point is the first turn's last transcript entry: its answer, after its tool call and the result.
    const transcript = JSON.parse(readFileSync(join(claude.dir, `session-${parent}.json`), "utf8")) as {
      chain: Array<{ uuid: string; turns: number }>;
    };
    const firstTurn = transcript.chain.filter((entry) => entry.turns === 1);
    expect(firstTurn).toHaveLength(3);
    expect(call.argv).toContain(`--resume-session-at=${firstTurn[2]?.uuid}`);
    // The fork remembers the first turn only; the CLI gave it a session id of its own.
    expect(call.remembered).toEqual([expect.stringContaining("alpha")]);
    expect(call.sessionId).not.toBe(parent);
    expect(result.reply?.content).toContain(`turn 2 of ${call.sessionId.slice(0, 8)}`);
    expect((await e.agents.store.get("dev", fork))?.id).toBe(call.sessionId);
    // Its first run's total includes what the parent cost before the fork: not measured, never double-counted.
    expect(await e.agents.store.costOf("dev", fork, result.input?.id as string)).toEqual({
      status: "not_measured",
    });

    // The next run on the fork resumes its own session plainly; the parent's resumes the parent, whole.
    await e.turn(dm("43", "delta"));
    const again = claude.calls<Call>().at(-1) as Call;
    expect(again).toMatchObject({ resume: call.sessionId, fork: false, sessionId: call.sessionId });
    expect(again.argv.some((a) => a.startsWith("--resume-session-at"))).toBe(false);
    await e.turn(dm("42", "epsilon"));
    const onParent = claude.calls<Call>().at(-1) as Call;
    expect(onParent).toMatchObject({ resume: parent, fork: false, sessionId: parent });
    expect(onParent.remembered).toHaveLength(2);
    expect(notes(await e.history(fork))).toEqual([]);
  });

  it("a fork between a turn's input and its reply resumes at the turn before; one before any reply starts fresh, with the note", async () => {
    const e = await open();
    const { key, parent, history } = await twoTurns(e);
    const secondInput = history.filter((x) => x.type === "message" && x.role === "user")[1]?.seq as number;
    const mid = e.route(dm("44", "")).key;
    await forkAt(e, key, secondInput, mid);
    await e.turn(dm("44", "gamma"));
    const call = claude.calls<Call>().at(-1) as Call;
    expect(call).toMatchObject({
      resume: parent,
      fork: true,
      remembered: [expect.stringContaining("alpha")],
    });
    // The new activity the fork's run is sent begins after the agent's last reply it kept.
    expect(call.prompt).toContain("beta");

    const early = e.route(dm("45", "")).key;
    const { outcome } = await forkAt(e, key, 1, early);
    expect(outcome).toEqual({ followed: [], cleared: ["dev"] });
    expect(await e.agents.store.get("dev", early)).toBeUndefined();
    expect(notes(await e.history(early))).toEqual([
      `Forked from ${key} at entry 1: dev (claude-code): no turn of its session ends within the entries kept. ` +
        "1 saved session cleared, so the next run starts fresh.",
    ]);
    await e.turn(dm("45", "gamma"));
    expect(claude.calls<Call>().at(-1)).toMatchObject({ fork: false, remembered: [] });
    expect(claude.calls<Call>().at(-1)?.resume).toBeUndefined();
  });

  it("a rewind to before the second turn: the key's next run branches its session there, the run after resumes the branch", async () => {
    const e = await open();
    const { key, parent, history } = await twoTurns(e);
    const secondInput = history.filter((x) => x.type === "message" && x.role === "user")[1]?.seq as number;
    const { from, outcome } = await rewindTo(e, key, secondInput);
    expect(outcome).toEqual({ followed: ["dev"], cleared: [] });
    const pending = await e.agents.store.get("dev", key);
    expect(pending?.id).toBe(parent);
    // Following the same rewind again (a retry) changes nothing.
    const id = (await e.store.getSession(key))?.id as string;
    expect(await e.agents.branch({ kind: "rewind", from, to: { key, id } }, e.store)).toEqual(outcome);
    expect(await e.agents.store.get("dev", key)).toEqual({ ...pending, savedAt: expect.any(Number) });

    await e.turn(dm("42", "gamma"));
    const branched = claude.calls<Call>().at(-1) as Call;
    expect(branched).toMatchObject({
      resume: parent,
      fork: true,
      remembered: [expect.stringContaining("alpha")],
    });
    expect(branched.sessionId).not.toBe(parent);
    await e.turn(dm("42", "delta"));
    const after = claude.calls<Call>().at(-1) as Call;
    expect(after).toMatchObject({ resume: branched.sessionId, fork: false });
    expect(after.remembered).toEqual([expect.stringContaining("alpha"), expect.stringContaining("gamma")]);

    // A second rewind, into the turns kept by the first: the marks it kept still name their turns.
    const now = await e.history(key);
    const gammaInput = now.filter((x) => x.type === "message" && x.role === "user")[1]?.seq as number;
    await rewindTo(e, key, gammaInput);
    await e.turn(dm("42", "zeta"));
    expect(claude.calls<Call>().at(-1)).toMatchObject({
      resume: branched.sessionId,
      fork: true,
      remembered: [expect.stringContaining("alpha")],
    });
  });

  it("a rewind to before any reply clears the key's Claude Code session (and its baseline) with the note; the next run starts fresh", async () => {
    const e = await open();
    const { key } = await twoTurns(e);
    const { outcome } = await rewindTo(e, key, 1);
    expect(outcome).toEqual({ followed: [], cleared: ["dev"] });
    expect(await e.agents.store.get("dev", key)).toBeUndefined();
    expect(await e.agents.store.baseline("dev", key)).toBeUndefined();
    expect(notes(await e.history(key))).toEqual([
      "Rewound to before entry 1: dev (claude-code): no turn of its session ends within the entries kept. " +
        "1 saved session cleared, so the next run starts fresh.",
    ]);
    await e.turn(dm("42", "gamma"));
    expect(claude.calls<Call>().at(-1)).toMatchObject({ fork: false, remembered: [] });
    expect(claude.calls<Call>().at(-1)?.resume).toBeUndefined();
  });

  it("a session saved before turns were marked (or whose marks are unreadable) cannot follow: cleared with the note", async () => {
    const e = await open();
    const { key, parent, history } = await twoTurns(e);
    await e.agents.store.save({
      agent: "dev",
      key,
      runtime: "claude-code",
      id: parent,
      data: { "sessiond.turns": "not json" },
      savedAt: 1,
    });
    const { outcome } = await rewindTo(e, key, replySeq(history, 2) + 1);
    expect(outcome.cleared).toEqual(["dev"]);
    expect(await e.agents.store.get("dev", key)).toBeUndefined();
  });

  it("marks kept by a runtime that cannot branch (the agent's runtime changed since) are not followed", async () => {
    const e = await open();
    const { key, history } = await twoTurns(e);
    const marked = await e.agents.store.get("dev", key);
    await e.agents.store.save({
      ...(marked as NonNullable<typeof marked>),
      runtime: "codex",
      id: "thread-1",
    });
    const { outcome } = await rewindTo(e, key, replySeq(history, 2) + 1);
    expect(outcome).toEqual({ followed: [], cleared: ["dev"] });
    expect(notes(await e.history(key)).at(-1)).toContain("dev (codex): its Codex SDK has no thread fork.");
  });
});
