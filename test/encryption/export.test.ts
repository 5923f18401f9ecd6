import { randomBytes } from "node:crypto";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, seed, useTempDir } from "../cli/helpers.js";
import { filesHolding, uniqueWord } from "../erasure/byte-scan.js";

const tempDir = useTempDir();

describe("sessions export on an encrypted store", () => {
  it("writes the history in clear for the user who holds the key; without it, refuses", async () => {
    const dir = tempDir();
    const key = randomBytes(32);
    const word = uniqueWord("export");
    writeFileSync(join(dir, "sessiond.yaml"), "store: { encryption: { key_env: SESSIOND_STORE_KEY } }\n");
    await seed(
      dir,
      async (engine) => {
        await engine.append("telegram:5", [{ type: "message", role: "user", content: `note ${word}` }], {
          init: { agent: "main", channel: "telegram", createdBy: "5" },
        });
      },
      { store: { backend: "sqlite", path: join(dir, "sessiond.db"), encryption: { key } } },
    );
    expect(filesHolding(dir, word)).toEqual([]);
    const args = [
      "--config",
      join(dir, "sessiond.yaml"),
      "--data-dir",
      dir,
      "sessions",
      "export",
      "telegram:5",
    ];
    const exported = await cli(dir, [...args, "--format", "jsonl"], {
      env: { SESSIOND_STORE_KEY: key.toString("base64") },
    });
    expect(exported.stdout).toContain(`note ${word}`);
    const refused = await cli(dir, [...args, "--format", "jsonl"], {
      env: { SESSIOND_STORE_KEY: randomBytes(32).toString("base64") },
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/STORE_CORRUPT.*another key/);
  });

  it("backs up the store sealed: the copy holds no byte of the text", async () => {
    const dir = tempDir();
    const out = tempDir();
    const key = randomBytes(32);
    const word = uniqueWord("backup");
    writeFileSync(join(dir, "sessiond.yaml"), "store: { encryption: { key_env: SESSIOND_STORE_KEY } }\n");
    await seed(
      dir,
      async (engine) => {
        await engine.append("telegram:6", [{ type: "message", role: "user", content: `note ${word}` }], {
          init: { agent: "main", channel: "telegram", createdBy: "6" },
        });
      },
      { store: { backend: "sqlite", path: join(dir, "sessiond.db"), encryption: { key } } },
    );
    const backup = await cli(
      dir,
      ["--config", join(dir, "sessiond.yaml"), "--data-dir", dir, "backup", join(out, "copy.db")],
      {
        env: { SESSIOND_STORE_KEY: key.toString("base64") },
      },
    );
    expect(backup.code).toBe(0);
    expect(readdirSync(out)).toContain("copy.db");
    expect(filesHolding(out, word)).toEqual([]);
  });
});
