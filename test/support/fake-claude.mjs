#!/usr/bin/env node
// A stand-in for the `claude` CLI speaking its stream-json protocol (what @anthropic-ai/claude-agent-sdk
// drives): a control_request `initialize` and user lines on stdin; system/init, assistant, compact_boundary
// and result lines on stdout. Sessions persist as JSON files in $FAKE_CLAUDE_STATE, so `--resume` works
// across processes. Every invocation is logged to $FAKE_CLAUDE_STATE/calls.jsonl.
//
// The prompt steers it: `[compact]` reports a compaction, `[zero-total]` a crashed run's zeroed total,
// `[total=N]` a given running total. Otherwise each turn adds $FAKE_CLAUDE_STEP (default 1) dollars.
import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

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
const model = option("model");
const out = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const sessionFile = (id) => join(state, `session-${id}.json`);

if (resume !== undefined && !existsSync(sessionFile(resume))) {
  process.stderr.write(`No conversation found with session ID: ${resume}\n`);
  process.exit(1);
}
const session = resume
  ? JSON.parse(readFileSync(sessionFile(resume), "utf8"))
  : { id: randomUUID(), turns: 0, totalUsd: 0, prompts: [] };
let appendSystemPrompt;

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
  const prompt = message.message.content.map((part) => part.text ?? "").join("");
  session.turns += 1;
  session.prompts.push(prompt);
  const step = Number(process.env.FAKE_CLAUDE_STEP ?? "1");
  const given = /\[total=([0-9.]+)\]/.exec(prompt);
  session.totalUsd = given ? Number(given[1]) : session.totalUsd + step;
  const reported = prompt.includes("[zero-total]") ? 0 : session.totalUsd;
  writeFileSync(sessionFile(session.id), JSON.stringify(session));
  appendFileSync(
    join(state, "calls.jsonl"),
    `${JSON.stringify({ argv, cwd: process.cwd(), model, resume, appendSystemPrompt, prompt, sessionId: session.id })}\n`,
  );
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
  const reply = `turn ${session.turns} of ${sid.slice(0, 8)} in ${process.cwd()}`;
  out({
    type: "assistant",
    message: {
      id: randomUUID(),
      type: "message",
      role: "assistant",
      model: model ?? "default",
      content: [
        { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "README.md" } },
        { type: "text", text: reply },
      ],
      stop_reason: "end_turn",
      usage: { input_tokens: 10, output_tokens: 5 },
    },
    parent_tool_use_id: null,
    session_id: sid,
    uuid: randomUUID(),
  });
  out({
    type: "result",
    subtype: "success",
    is_error: false,
    duration_ms: 1,
    duration_api_ms: 1,
    num_turns: 1,
    result: reply,
    stop_reason: "end_turn",
    session_id: sid,
    total_cost_usd: reported,
    usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    modelUsage: {},
    permission_denials: [],
    uuid: randomUUID(),
  });
});
rl.on("close", () => process.exit(0));
