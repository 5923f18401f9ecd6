#!/usr/bin/env node
// A stand-in for `codex exec --experimental-json` (what @openai/codex-sdk spawns): reads the prompt from
// stdin, prints thread.started / turn.started / item.completed / turn.completed JSON lines. Threads persist
// in $FAKE_CODEX_STATE, so `resume <id>` works across processes; each call is logged to calls.jsonl there.
import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// The trace context it was started with, and which OTEL_* variables it got (names only: their values may be secrets).
const traceEnv = () => ({
  TRACEPARENT: process.env.TRACEPARENT,
  TRACESTATE: process.env.TRACESTATE,
  otel: Object.keys(process.env)
    .filter((name) => name.startsWith("OTEL_"))
    .sort(),
});

const state = process.env.FAKE_CODEX_STATE;
if (!state) {
  process.stderr.write("FAKE_CODEX_STATE is not set\n");
  process.exit(2);
}
const argv = process.argv.slice(2);
const option = (name) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
};
const resume = argv.includes("resume") ? argv[argv.indexOf("resume") + 1] : undefined;
const threadFile = (id) => join(state, `thread-${id}.json`);
if (resume !== undefined && !existsSync(threadFile(resume))) {
  process.stderr.write(`Error: thread ${resume} not found\n`);
  process.exit(1);
}
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const prompt = Buffer.concat(chunks).toString("utf8");
const thread = resume ? JSON.parse(readFileSync(threadFile(resume), "utf8")) : { id: randomUUID(), turns: 0 };
thread.turns += 1;
writeFileSync(threadFile(thread.id), JSON.stringify(thread));
appendFileSync(
  join(state, "calls.jsonl"),
  `${JSON.stringify({ argv, model: option("--model"), cd: option("--cd"), resume, prompt, threadId: thread.id, env: traceEnv() })}\n`,
);
const out = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
out({ type: "thread.started", thread_id: thread.id });
out({ type: "turn.started" });
out({
  type: "item.completed",
  item: {
    id: "item_0",
    type: "command_execution",
    command: "ls",
    aggregated_output: "README.md\n",
    exit_code: 0,
    status: "completed",
  },
});
out({
  type: "item.completed",
  item: {
    id: "item_1",
    type: "agent_message",
    text: `codex turn ${thread.turns} of ${thread.id.slice(0, 8)}`,
  },
});
out({ type: "turn.completed", usage: { input_tokens: 20, cached_input_tokens: 0, output_tokens: 7 } });
