import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const SCRIPT = fileURLToPath(new URL("../../scripts/test-deps.sh", import.meta.url));
const empty = mkdtempSync(join(tmpdir(), "sessiond-test-deps-"));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

/** The script with nothing installed under `root` and no apt-get on PATH. */
function run(env: Record<string, string>) {
  return spawnSync("/bin/bash", [SCRIPT], {
    encoding: "utf8",
    env: { PATH: join(empty, "bin"), SESSIOND_TEST_DEPS_ROOT: empty, ...env },
  });
}

describe("npm test's system packages", () => {
  it("where it cannot install them, names them and how to go on, and fails", () => {
    const result = run({});
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("the tests need the Debian packages chromium postgresql");
    expect(result.stderr).toContain("there is no apt-get here");
    expect(result.stderr).toContain("apt-get install -y chromium postgresql");
  });

  it("goes on without them when told to", () => {
    const result = run({ SESSIOND_TEST_DEPS: "skip" });
    expect(result.status).toBe(0);
    expect(result.stderr).toContain("going on without chromium postgresql");
  });

  it("does nothing when they are there (npm test ran it first)", () => {
    const result = spawnSync("/bin/bash", [SCRIPT], { encoding: "utf8" });
    expect([result.status, result.stderr]).toEqual([0, ""]);
  });
});
