import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { createEngine } from "../../src/engine.js";

describe("store: { backend: jsonl }", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-config-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("opens a directory of CrabTalk session files under data_dir, and takes SESSIOND_STORE=jsonl", async () => {
    writeFileSync(
      join(dir, "sessiond.yaml"),
      "data_dir: data\nstore:\n  backend: jsonl\n  durability: relaxed\n",
    );
    const { config } = loadConfig({ cwd: dir, env: {} });
    expect(config.store).toEqual({
      backend: "jsonl",
      path: join(dir, "data", "sessions"),
      durability: "relaxed",
    });
    expect(loadConfig({ cwd: dir, env: { SESSIOND_STORE: "jsonl" } }).config.store).toMatchObject({
      backend: "jsonl",
    });
    const engine = await createEngine(config);
    const result = await engine.turnWith(
      { channel: "telegram", chat: { type: "direct", id: "42" }, sender: { id: "42" }, text: "hello" },
      async (context) => `you said: ${context.input.content}`,
    );
    expect(result.reply?.content).toBe("you said: hello");
    await engine.close();
    // Key `telegram:42`'s own family (sender slug + key hash); the background title may already have renamed it.
    const files = readdirSync(join(dir, "data", "sessions")).filter((n) => n.endsWith(".jsonl"));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^main_42-[0-9a-f]{12}_1(_[a-z0-9-]+)?\.jsonl$/);
  });
});
