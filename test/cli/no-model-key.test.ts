import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

// An agent, compaction and titles on a model whose key variable is not set (nor its server running).
const CONFIG = `models:
  local:
    provider: openai
    base_url: http://127.0.0.1:9/v1
    model: llama3.1
    api_key_env: SESSIOND_TEST_UNSET_KEY
agents:
  - id: main
    model: local
compaction:
  model: local
titles:
  model: local
`;

async function seeded(): Promise<string> {
  const dir = tempDir();
  await seed(dir, async (engine) => {
    for (let i = 1; i <= 4; i++) {
      await engine.append("main", [
        { type: "message", role: "user", content: `window seats please, ref QX-${i}` },
        { type: "message", role: "assistant", content: `noted ${i}` },
      ]);
    }
  });
  writeFileSync(join(dir, "sessiond.yaml"), `data_dir: ${JSON.stringify(dir)}\n${CONFIG}`);
  return dir;
}

describe("commands that do not call a model", () => {
  it("never need the model's key", async () => {
    const dir = await seeded();
    const commands = [
      ["sessions", "list"],
      ["sessions", "show", "main"],
      ["sessions", "export", "main", "--format", "jsonl"],
      ["search", "window"],
      ["agents", "list"],
      ["agents", "show", "main"],
      ["route", "--channel", "telegram", "--sender", "1"],
    ];
    for (const args of commands) {
      const result = await cli(dir, args);
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" });
    }
    const listed = await cli(dir, ["sessions", "list"]);
    expect(listed.stdout).toContain("main");
  });

  it("compaction, which does call it, names the unset variable and loses nothing", async () => {
    const dir = await seeded();
    const result = await cli(dir, ["sessions", "compact", "main"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("SESSIOND_TEST_UNSET_KEY");
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    const shown = await cli(dir, ["sessions", "show", "main", "--json"]);
    const body = JSON.parse(shown.stdout) as { entries: Array<{ type: string }> };
    expect(body.entries.filter((e) => e.type === "message")).toHaveLength(8);
    expect(body.entries.some((e) => e.type === "compaction")).toBe(false);
  });
});
