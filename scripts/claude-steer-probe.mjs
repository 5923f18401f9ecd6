#!/usr/bin/env node
// What the real `claude` CLI does with a user message written to the SDK's streaming input while a turn
// runs. Offline: the CLI the SDK ships (@anthropic-ai/claude-agent-sdk-linux-x64) talks to a local
// Anthropic Messages server that answers the first round with a Read call, held until the second message
// is on the CLI's stdin, and every later request with text. Prints, per priority, each result's
// user_message_uuids and whether the model's next request carried the second message after the
// tool_result. Run: node scripts/claude-steer-probe.mjs [path/to/claude]
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { query } from "@anthropic-ai/claude-agent-sdk";

const executable = process.argv[2];

async function probe(priority) {
  const dir = mkdtempSync(join(tmpdir(), "claude-steer-probe-"));
  writeFileSync(join(dir, "notes.txt"), "tool ran\n");
  let written;
  const steerWritten = new Promise((resolve) => {
    written = resolve;
  });
  const requests = [];
  const server = createServer(async (req, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    const body = text ? JSON.parse(text) : {};
    if (!req.url?.startsWith("/v1/messages") || req.url.includes("count_tokens")) {
      res.writeHead(200, { "content-type": "application/json" }).end('{"input_tokens":1}');
      return;
    }
    // The agent loop's requests offer tools; side requests (titles and such) get plain text.
    const main = (body.tools?.length ?? 0) > 0;
    if (main) requests.push(body.messages);
    const first = main && requests.length === 1;
    if (first) await steerWritten;
    const block = first
      ? { type: "tool_use", id: "toolu_probe", name: "Read", input: { file_path: join(dir, "notes.txt") } }
      : { type: "text", text: `answer ${requests.length}` };
    sendStream(res, body.model, block);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const first = randomUUID();
  const second = randomUUID();
  let initialized;
  const ready = new Promise((resolve) => {
    initialized = resolve;
  });
  async function* prompt() {
    yield user("Read notes.txt", first);
    await ready;
    yield { ...user("Also say banana.", second), ...(priority ? { priority } : {}) };
    // The server answers the held round once the SDK has written this line to stdin.
    setImmediate(written);
    await done;
  }
  let finish;
  const done = new Promise((resolve) => {
    finish = resolve;
  });
  const results = [];
  const options = {
    cwd: dir,
    allowedTools: ["Read"],
    env: {
      ...process.env,
      HOME: dir,
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${server.address().port}`,
      ANTHROPIC_API_KEY: "sk-ant-probe",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
    ...(executable ? { pathToClaudeCodeExecutable: executable } : {}),
  };
  for await (const message of query({ prompt: prompt(), options })) {
    if (message.type === "system" && message.subtype === "init") initialized();
    if (message.type !== "result") continue;
    const uuids = (message.user_message_uuids ?? []).map((u) => (u === first ? "first" : "second"));
    results.push(uuids);
    if (uuids.includes("second")) break;
  }
  finish();
  server.close();
  rmSync(dir, { recursive: true, force: true });
  const afterTool = requests[1]?.at(-1)?.content;
  const folded = Array.isArray(afterTool) && JSON.stringify(afterTool).includes("Also say banana.");
  return { priority: priority ?? "(none)", results, foldedAfterToolResult: folded };
}

function user(text, uuid) {
  return {
    type: "user",
    session_id: "",
    message: { role: "user", content: [{ type: "text", text }] },
    parent_tool_use_id: null,
    uuid,
  };
}

function sendStream(res, model, block) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const usage = { input_tokens: 10, output_tokens: 5 };
  const stop = block.type === "tool_use" ? "tool_use" : "end_turn";
  send("message_start", {
    message: { id: `msg_${randomUUID()}`, type: "message", role: "assistant", model, content: [], usage },
  });
  const start = block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} };
  send("content_block_start", { index: 0, content_block: start });
  const delta =
    block.type === "text"
      ? { type: "text_delta", text: block.text }
      : { type: "input_json_delta", partial_json: JSON.stringify(block.input) };
  send("content_block_delta", { index: 0, delta });
  send("content_block_stop", { index: 0 });
  send("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
  send("message_stop", {});
  res.end();
}

for (const priority of [undefined, "next", "later"]) console.log(JSON.stringify(await probe(priority)));
