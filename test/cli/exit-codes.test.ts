import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

describe("exit codes and messages", () => {
  it("0 with help for no command", async () => {
    const result = await cli(tempDir(), []);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: sessiond /);
    expect(result.stdout).toContain("Exit codes:");
    expect(result.stderr).toBe("");
  });

  it("1 for an unknown session key, with the error code and no stack trace", async () => {
    const dir = tempDir();
    const result = await cli(dir, ["--data-dir", dir, "sessions", "show", "nope"]);
    expect(result).toMatchObject({
      code: 1,
      stdout: "",
      stderr: 'error [SESSION_NOT_FOUND]: no session for key "nope"\n',
    });
  });

  it("2 for an unknown option, an unknown command and a missing argument", async () => {
    const dir = tempDir();
    const option = await cli(dir, ["sessions", "list", "--colour"]);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("unknown option '--colour'");
    const command = await cli(dir, ["sessionz"]);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("unknown command 'sessionz'");
    const argument = await cli(dir, ["sessions", "show"]);
    expect(argument.code).toBe(2);
    expect(argument.stderr).toContain("missing required argument 'key'");
  });

  it("2 for a bad --limit, checked before anything is read", async () => {
    const dir = tempDir();
    for (const limit of ["abc", "0", "1001", "2.5"]) {
      const result = await cli(dir, ["sessions", "list", "--limit", limit]);
      expect({ limit, code: result.code }).toEqual({ limit, code: 2 });
      expect(result.stderr).toContain("--limit");
    }
  });

  it("2 for a key the engine rejects as invalid", async () => {
    const dir = tempDir();
    const result = await cli(dir, ["--data-dir", dir, "sessions", "show", "bad\u0007key"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error \[INVALID_KEY\]: /);
  });

  it("1 for a missing config file", async () => {
    const dir = tempDir();
    const result = await cli(dir, ["--config", "nowhere.yaml", "sessions", "list"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error \[CONFIG_INVALID\]: config file not found: .*nowhere\.yaml\n$/);
  });

  it("warns on stderr about unknown config keys, naming their path, and still runs", async () => {
    const dir = tempDir();
    await seed(join(dir, "from-config"), async (engine) => {
      await engine.append("telegram:1", [{ type: "message", role: "user", content: "hi" }]);
    });
    writeFileSync(join(dir, "sessiond.yaml"), "data_dir: from-config\nsession:\n  dm_scop: main\n");
    const result = await cli(dir, ["sessions", "list", "--json"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^warning: .*sessiond\.yaml: unknown key session\.dm_scop \(ignored\)\n$/);
    expect(JSON.parse(result.stdout).sessions).toHaveLength(1);
  });

  it("--data-dir wins over the config file's data_dir", async () => {
    const dir = tempDir();
    await seed(join(dir, "flag"), async (engine) => {
      await engine.append("telegram:2", [{ type: "message", role: "user", content: "hi" }]);
    });
    writeFileSync(join(dir, "sessiond.yaml"), "data_dir: from-config\n");
    const viaFlag = await cli(dir, ["--data-dir", "flag", "sessions", "show", "telegram:2"]);
    expect(viaFlag.code).toBe(0);
    const viaConfig = await cli(dir, ["sessions", "show", "telegram:2"]);
    expect(viaConfig.code).toBe(1);
  });
});
