import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import type { Envelope } from "../../src/model/envelope.js";
import { adminToolsFor } from "../../src/runtimes/admin-tools.js";
import { cli } from "../cli/helpers.js";
import { useTempDirs } from "../support/temp-dirs.js";
import { filesHolding, uniqueMarker } from "./scan.js";

const tempDir = useTempDirs();

function dm(peer: string, text: string): Envelope {
  return { channel: "telegram", chat: { type: "direct", id: peer }, sender: { id: peer }, text };
}

describe("what reads an incognito session", () => {
  it("the admin tools neither list nor read it: what they read is stored in the admin's session", async () => {
    const engine = await createEngine({ dataDir: tempDir("sessiond-incognito-reads-") });
    try {
      await engine.turn(dm("1", "stored talk"));
      await engine.turn(dm("2", "secret talk"), { incognito: true });
      const tools = adminToolsFor("alice", { engine, admins: ["alice"] });
      const signal = new AbortController().signal;
      const list = await tools.execute({ name: "sessions_list", arguments: "{}" }, signal);
      const keys = (JSON.parse(list.content) as { sessions: Array<{ key: string }> }).sessions.map(
        (s) => s.key,
      );
      expect(keys).toEqual(["telegram:1"]);
      const read = await tools.execute(
        { name: "sessions_history", arguments: JSON.stringify({ key: "telegram:2" }) },
        signal,
      );
      expect(read.failed).toBe(true);
      expect(read.content).not.toContain("secret talk");
      const stored = await tools.execute(
        { name: "sessions_history", arguments: JSON.stringify({ key: "telegram:1" }) },
        signal,
      );
      expect(stored.content).toContain("stored talk");
    } finally {
      await engine.close();
    }
  });

  it("compaction and resets keep it in memory", async () => {
    const dir = tempDir("sessiond-incognito-reads-");
    const secret = uniqueMarker();
    const engine = await createEngine({ dataDir: dir, compaction: { maxMessages: 4, keepRecent: 1 } });
    try {
      for (let i = 0; i < 4; i++) await engine.turn(dm("3", `turn ${i} ${secret}`), { incognito: true });
      await engine.idle("telegram:3");
      const compacted = await engine.compact("telegram:3");
      expect(compacted.summary).not.toBe("");
      await engine.reset("telegram:3");
      await engine.turn(dm("3", `after the reset ${secret}`));
      expect(engine.isIncognito("telegram:3")).toBe(true);
      expect(await engine.sessions.generations("telegram:3")).toHaveLength(2);
      await engine.store.sync();
      expect(filesHolding(dir, secret)).toEqual([]);
    } finally {
      await engine.close();
    }
    expect(filesHolding(dir, secret)).toEqual([]);
  });

  it("`sessions export` refuses a key a session.incognito_for rule matches (needs the build)", async () => {
    const dir = tempDir("sessiond-incognito-cli-");
    writeFileSync(join(dir, "sessiond.yaml"), "session:\n  incognito_for: ['telegram:*']\n");
    const result = await cli(dir, ["sessions", "export", "telegram:5", "--format", "md"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("SESSION_INCOGNITO");
    expect(result.stderr).toContain("telegram:5");
  });
});
