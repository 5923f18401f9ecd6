import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { leakedPiece } from "../context/leaks.js";
import { SECRET_CORPUS } from "../support/secret-corpus.js";

const SECRET = SECRET_CORPUS.find((s) => s.name === "OpenAI project key")!.secret;

let engine: Engine | undefined;
let dir = "";
afterEach(async () => {
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a shared conversation CrabTalk wrote (not redacted on the way in)", () => {
  it("shows its text redacted, and none of its reasoning, tool calls or results", async () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-share-redact-"));
    const sessions = join(dir, "sessions");
    mkdirSync(sessions);
    // CrabTalk v0.0.19 lines, field by field as peer-formats.md §2.3 gives them.
    const lines = [
      {
        agent: "crab",
        created_by: "tg:12345",
        created_at: "2026-11-30T08:40:00.000+00:00",
        title: "",
        uptime_secs: 3,
      },
      { role: "user", content: `my key is ${SECRET}, keep it safe` },
      {
        role: "assistant",
        content: "Checking.",
        reasoning_content: "REASONING-TEXT",
        tool_calls: [
          { id: "call_9", type: "function", function: { name: "vault", arguments: '{"k":"TOOL-ARG"}' } },
        ],
      },
      { role: "tool", content: "TOOL-RESULT-TEXT", name: "vault", tool_call_id: "call_9" },
      { role: "assistant", content: "Stored." },
    ];
    writeFileSync(
      join(sessions, "crab_tg-12345_1.jsonl"),
      `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`,
    );
    engine = await createEngine({
      dataDir: dir,
      store: { backend: "jsonl", path: sessions },
      agents: ["crab"],
      defaultAgent: "crab",
      lifecycle: { sweepIntervalMs: 0 },
      titles: { enabled: false },
    });
    const [session] = (await engine.sessions.list()).sessions;
    // The history holds the secret as CrabTalk wrote it: what the share shows is redacted on the way out.
    const history = JSON.stringify(await engine.history(session!.key));
    expect(history).toContain(SECRET);
    const view = await engine.shares.view((await engine.shares.create(session!.key)).id);
    const text = JSON.stringify(view);
    expect(leakedPiece(text, SECRET.slice(8))).toBeUndefined();
    expect(view?.messages.map((m) => m.content)).toEqual([
      "my key is [redacted], keep it safe",
      "Checking.",
      "Stored.",
    ]);
    for (const hidden of ["REASONING", "TOOL-", "vault", "tg:12345"]) expect(text).not.toContain(hidden);
  });
});
