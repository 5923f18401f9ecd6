import { appendFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionPage } from "../../src/index.js";
import { cli, parseJson, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

describe("a JSONL store with bad lines, through the CLI", () => {
  it("lists, shows and appends; each skipped line is a warning naming its file and line", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.yaml"), "data_dir: data\nstore:\n  backend: jsonl\n");
    const sessions = join(dir, "data", "sessions");
    await seed(
      join(dir, "data"),
      async (engine) => {
        await engine.append("telegram:42", [
          { type: "message", role: "user", content: "hello" },
          { type: "message", role: "assistant", content: "hi" },
        ]);
      },
      { store: { backend: "jsonl", path: sessions } },
    );
    const file = readdirSync(sessions).find((n) => n.endsWith(".jsonl"));
    expect(file).toBeDefined();
    // Line 4: a compact marker carrying a message's fields; line 5: a message whose content is not a
    // string; both with sessiond's own fields, as if sessiond had written them.
    const ts = Date.now();
    appendFileSync(
      join(sessions, file!),
      `${JSON.stringify({ compact: "x", role: "user", content: "y", seq: 3, id: "01JD000000000000000000000C", ts })}\n` +
        `${JSON.stringify({ role: "user", content: { a: 1 }, seq: 4, id: "01JD000000000000000000000D", ts })}\n`,
    );

    const list = await cli(dir, ["sessions", "list", "--json"]);
    expect(list.code).toBe(0);
    expect(parseJson<SessionPage>(list.stdout).sessions.map((s) => s.key)).toEqual(["telegram:42"]);
    expect(list.stderr).toContain(`${file} line 4:`);
    expect(list.stderr).toContain(`${file} line 5:`);
    expect(list.stderr).not.toContain("TypeError");

    const append = await cli(dir, ["sessions", "append", "telegram:42", "still", "here"]);
    expect(append.code).toBe(0);
    const show = await cli(dir, ["sessions", "show", "telegram:42", "--json"]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("hello");
    expect(show.stdout).toContain("still here");
  });
});
