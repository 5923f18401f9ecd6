import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});
const withConfig = (yaml: string) => {
  dir = mkdtempSync(join(tmpdir(), "sessiond-sealed-config-"));
  writeFileSync(join(dir, "sessiond.yaml"), yaml);
  return dir;
};
const failure = (run: () => unknown): { code?: string; message: string } => {
  try {
    run();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error("no error");
};

describe("store.encryption.key_env", () => {
  it("gives the store the key the variable holds", () => {
    const cwd = withConfig("store: { backend: jsonl, encryption: { key_env: MY_KEY } }\n");
    const key = randomBytes(32);
    const { config } = loadConfig({ cwd, env: { MY_KEY: key.toString("base64") } });
    expect(config.store).toMatchObject({ backend: "jsonl", encryption: { key } });
  });

  it("refuses a missing or wrong-size key with CONFIG_INVALID naming the variable, never the value", () => {
    const cwd = withConfig("store: { encryption: { key_env: MY_KEY } }\n");
    const missing = failure(() => loadConfig({ cwd, env: {} }));
    expect(missing).toMatchObject({ code: "CONFIG_INVALID" });
    expect(missing.message).toMatch(/MY_KEY, which is not set/);
    const short = randomBytes(16).toString("base64");
    const wrong = failure(() => loadConfig({ cwd, env: { MY_KEY: short } }));
    expect(wrong).toMatchObject({ code: "CONFIG_INVALID" });
    expect(wrong.message).toMatch(/MY_KEY must hold 32 bytes.*holds 16 bytes/);
    expect(wrong.message).not.toContain(short);
    const text = "not base64 at all!";
    const garbage = failure(() => loadConfig({ cwd, env: { MY_KEY: text } }));
    expect(garbage.message).toMatch(/holds no base64/);
    expect(garbage.message).not.toContain(text);
  });

  it("refuses encryption on the memory store (nothing of it is at rest)", () => {
    const cwd = withConfig("store: { backend: memory, encryption: { key_env: MY_KEY } }\n");
    const error = failure(() => loadConfig({ cwd, env: { MY_KEY: randomBytes(32).toString("base64") } }));
    expect(error).toMatchObject({ code: "CONFIG_INVALID" });
  });
});
