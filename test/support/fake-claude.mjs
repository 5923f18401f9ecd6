#!/usr/bin/env node
// A stand-in for the `claude` CLI speaking its stream-json protocol (what @anthropic-ai/claude-agent-sdk
// drives): a control_request `initialize` and user lines on stdin; system/init, assistant, user
// (tool_result), compact_boundary, command_lifecycle and result lines on stdout. Sessions persist as JSON
// files in $FAKE_CLAUDE_STATE, so `--resume` works across processes. Every turn is logged to
// $FAKE_CLAUDE_STATE/calls.jsonl.
//
// Like the real CLI (2.1.332, probed with scripts/claude-steer-probe.mjs), a user line is queued
// (command_lifecycle `queued`) and turns run one at a time: each makes one tool call (Read), then folds the
// messages queued meanwhile into the running turn (`started`), unless their priority is `later`, answers,
// and lists every uuid it consumed in its result (`user_message_uuids`); the rest run as later turns.
//
// The prompt steers it: `[hold]` (`[hold=N]`) keeps its tool call running until another user line (N
// lines) is queued, and `[hold-text]` its answer (a turn without a tool call, which folds nothing); `[compact]` reports a
// compaction, `[zero-total]` a crashed run's zeroed total, `[total=N]` a given running total. Otherwise
// each turn adds $FAKE_CLAUDE_STEP (default 1) dollars.
//
// `--resume-session-at=UUID` keeps the resumed transcript up to the entry with that uuid (an assistant
// message or a tool result of an earlier turn; an unknown uuid fails like the CLI: "No message found with
// message.uuid of: …"), and `--fork-session` continues it under a new session id, the original unchanged.
// Each call logs the prompts its session remembered before the turn (`remembered`).
//
// $FAKE_CLAUDE_UUIDS plays an older CLI: `single` lists only `user_message_uuid` (the turn's prompt) in a
// result, `none` no uuid at all. Each exit is logged to $FAKE_CLAUDE_STATE/exits.jsonl with what it answered.
import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

// The trace context it was started with, and which OTEL_* variables it got (names only: their values may be secrets).
const traceEnv = () => ({
  TRACEPARENT: process.env.TRACEPARENT,
  TRACESTATE: process.env.TRACESTATE,
  otel: Object.keys(process.env)
    .filter((name) => name.startsWith("OTEL_"))
    .sort(),
});

const state = process.env.FAKE_CLAUDE_STATE;
if (!state) {
  process.stderr.write("FAKE_CLAUDE_STATE is not set\n");
  process.exit(2);
}
const argv = process.argv.slice(2);
const option = (name) => {
  const inline = argv.find((a) => a.startsWith(`--${name}=`));
  if (inline) return inline.slice(name.length + 3);
  const at = argv.indexOf(`--${name}`);
  return at >= 0 ? argv[at + 1] : undefined;
};
const resume = option("resume");
const resumeAt = option("resume-session-at");
const fork = argv.includes("--fork-session");
const listed = process.env.FAKE_CLAUDE_UUIDS ?? "all";
const model = option("model");
const out = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const sessionFile = (id) => join(state, `session-${id}.json`);

if (resume !== undefined && !existsSync(sessionFile(resume))) {
  process.stderr.write(`No conversation found with session ID: ${resume}\n`);
  process.exit(1);
}
const session = resume
  ? JSON.parse(readFileSync(sessionFile(resume), "utf8"))
  : { id: randomUUID(), turns: 0, totalUsd: 0, prompts: [], chain: [] };
session.chain ??= [];
if (resumeAt !== undefined) {
  // The transcript's entries, each with the number of turns complete once it is written.
  const at = session.chain.find((entry) => entry.uuid === resumeAt);
  if (!at) {
    process.stderr.write(`No message found with message.uuid of: ${resumeAt}\n`);
    process.exit(1);
  }
  session.chain = session.chain.filter((entry) => entry.turns <= at.turns);
  session.prompts = session.prompts.slice(0, at.turns);
  session.turns = at.turns;
}
if (fork) session.id = randomUUID();
let appendSystemPrompt;

/** User lines waiting for a turn, oldest first; `arrived` wakes a held turn. */
const queued = [];
let arrived = () => {};
let running = false;
let closed = false;
/** User lines read from stdin, and those a turn consumed. */
let read = 0;
let consumedLines = 0;
process.on("exit", (code) => {
  try {
    appendFileSync(
      join(state, "exits.jsonl"),
      `${JSON.stringify({ code, read, consumed: consumedLines })}\n`,
    );
  } catch {
    // The test that started it is over and its state directory gone: nobody reads this.
  }
});

/** Resolves once `n` user lines are queued (or stdin closed). */
const arrivals = async (n) => {
  while (queued.length < n && !closed) await new Promise((resolve) => (arrived = resolve));
};
const textOf = (message) => {
  const content = message.message.content;
  return typeof content === "string" ? content : content.map((part) => part.text ?? "").join("");
};
const lifecycle = (message, state) => {
  if (message.uuid)
    out({
      type: "command_lifecycle",
      command_uuid: message.uuid,
      state,
      uuid: randomUUID(),
      session_id: session.id,
    });
};

const rl = createInterface({ input: process.stdin });
rl.on("line", (text) => {
  const message = JSON.parse(text);
  if (message.type === "control_request") {
    if (message.request?.subtype === "initialize") appendSystemPrompt = message.request.appendSystemPrompt;
    out({
      type: "control_response",
      response: { subtype: "success", request_id: message.request_id, response: {} },
    });
    return;
  }
  if (message.type !== "user") return;
  lifecycle(message, "queued");
  read += 1;
  queued.push(message);
  arrived();
  void drain();
});
rl.on("close", () => {
  closed = true;
  arrived();
  if (!running && queued.length === 0) process.exit(0);
});

async function drain() {
  if (running) return;
  running = true;
  while (queued.length > 0) await turn(queued.shift());
  running = false;
  if (closed) process.exit(0);
}

async function turn(message) {
  lifecycle(message, "started");
  const prompt = textOf(message);
  const remembered = [...session.prompts];
  session.turns += 1;
  session.prompts.push(prompt);
  const step = Number(process.env.FAKE_CLAUDE_STEP ?? "1");
  const given = /\[total=([0-9.]+)\]/.exec(prompt);
  session.totalUsd = given ? Number(given[1]) : session.totalUsd + step;
  const reported = prompt.includes("[zero-total]") ? 0 : session.totalUsd;
  writeFileSync(sessionFile(session.id), JSON.stringify(session));
  const sid = session.id;
  out({
    type: "system",
    subtype: "init",
    session_id: sid,
    cwd: process.cwd(),
    model: model ?? "default",
    tools: [],
    mcp_servers: [],
    permissionMode: "default",
    apiKeySource: "none",
    slash_commands: [],
    output_style: "default",
    uuid: randomUUID(),
  });
  if (prompt.includes("[compact]")) {
    out({
      type: "system",
      subtype: "compact_boundary",
      session_id: sid,
      uuid: randomUUID(),
      compact_metadata: { trigger: "auto", pre_tokens: 150000, post_tokens: 12000 },
    });
  }
  const chained = () => {
    const uuid = randomUUID();
    session.chain.push({ uuid, turns: session.turns });
    return uuid;
  };
  const assistant = (content, stop_reason) =>
    out({
      type: "assistant",
      message: {
        id: randomUUID(),
        type: "message",
        role: "assistant",
        model: model ?? "default",
        content,
        stop_reason,
        usage: { input_tokens: 5, output_tokens: 2 },
      },
      parent_tool_use_id: null,
      session_id: sid,
      uuid: chained(),
    });
  const consumed = [message];
  const folded = [];
  const priorities = [];
  const hold = /\[hold(?:=(\d+))?\]/.exec(prompt);
  if (prompt.includes("[hold-text]")) {
    await arrivals(1);
  } else {
    assistant(
      [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "README.md" } }],
      "tool_use",
    );
    if (hold) await arrivals(Number(hold[1] ?? "1"));
    out({
      type: "user",
      message: {
        role: "user",
        content: [{ tool_use_id: "toolu_1", type: "tool_result", content: "# README" }],
      },
      parent_tool_use_id: null,
      session_id: sid,
      uuid: chained(),
    });
    // The tool boundary: what was queued meanwhile joins this turn, oldest first.
    while (queued.length > 0 && queued[0].priority !== "later") {
      const next = queued.shift();
      lifecycle(next, "started");
      consumed.push(next);
      folded.push(textOf(next));
      priorities.push(next.priority ?? null);
    }
  }
  appendFileSync(
    join(state, "calls.jsonl"),
    `${JSON.stringify({ argv, cwd: process.cwd(), model, resume, resumeAt, fork, remembered, appendSystemPrompt, prompt, folded, priorities, sessionId: sid, env: traceEnv() })}\n`,
  );
  const reply = `turn ${session.turns} of ${sid.slice(0, 8)} in ${process.cwd()}${folded.length ? `; heard ${folded.join(" | ")}` : ""}`;
  assistant([{ type: "text", text: reply }], "end_turn");
  writeFileSync(sessionFile(sid), JSON.stringify(session));
  const uuids = consumed.flatMap((m) => (m.uuid ? [m.uuid] : []));
  out({
    type: "result",
    subtype: "success",
    is_error: false,
    duration_ms: 1,
    duration_api_ms: 1,
    num_turns: prompt.includes("[hold-text]") ? 1 : 2,
    result: reply,
    stop_reason: "end_turn",
    session_id: sid,
    total_cost_usd: reported,
    usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    modelUsage: {},
    permission_denials: [],
    ...(uuids.length && listed !== "none" ? { user_message_uuid: message.uuid } : {}),
    ...(uuids.length && listed === "all" ? { user_message_uuids: uuids } : {}),
    queued_turn_count: queued.length,
    uuid: randomUUID(),
  });
  consumedLines += consumed.length;
  for (const m of consumed) lifecycle(m, "completed");
}
