import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { nodeTooOld } from "../../src/model/node-version.js";
import { seed, useTempDir } from "./helpers.js";

const CLI = fileURLToPath(new URL("../../dist/bundle/main.js", import.meta.url));
const tempDir = useTempDir();

/** A Node older than 22 on this machine (a CI machine's own /usr/bin/node 20), if there is one. */
function olderNode(): { path: string; version: string } | undefined {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/bin", "/usr/local/bin"];
  for (const dir of new Set(dirs.filter(Boolean))) {
    const path = join(dir, "node");
    try {
      accessSync(path, constants.X_OK);
    } catch {
      continue;
    }
    const version = spawnSync(path, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
    if (Number(version.split(".")[0]) < 22) return { path, version };
  }
  return undefined;
}
const older = olderNode();

describe("the Node that runs sessiond", () => {
  it("22 and 24 run; 20 and older are refused in one line that says how to get 22", () => {
    expect(nodeTooOld("22.0.0", "/n/node")).toBeUndefined();
    expect(nodeTooOld("24.21.0", "/n/node")).toBeUndefined();
    expect(nodeTooOld("26.1.0", "/n/node")).toBeUndefined();
    const refused = nodeTooOld("20.20.2", "/usr/bin/node");
    expect(refused).toContain("sessiond needs Node 22 or 24, and this is Node 20.20.2 (/usr/bin/node)");
    expect(refused).toContain("npm install --prefix ~/node22 node@22");
    expect(refused).not.toContain("\n");
  });

  // better-sqlite3 13 crashes on Node 20 at its first statement (SIGSEGV): the bin must say why instead.
  it.skipIf(older === undefined)("the bin on an older Node exits 1 with that line, not a crash", async () => {
    const dataDir = join(tempDir(), "data");
    await seed(dataDir, async (engine) => {
      await engine.append("telegram:1", [{ type: "message", role: "user", content: "kept", ts: 1000 }]);
    });
    const result = spawnSync(older?.path ?? "", [CLI, "--data-dir", dataDir, "sessions", "list"], {
      encoding: "utf8",
    });
    expect(result.signal).toBeNull();
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`error: ${nodeTooOld(older?.version ?? "", older?.path ?? "")}\n`);
    expect(result.stdout).toBe("");
  });

  it.skipIf(older === undefined)(
    "the library on an older Node refuses to open SQLite with that line, not a crash",
    () => {
      const dataDir = join(tempDir(), "lib");
      const engineUrl = new URL("../../dist/src/engine.js", import.meta.url).href;
      const script = `
      const { createEngine } = await import(${JSON.stringify(engineUrl)});
      try {
        await createEngine({ dataDir: ${JSON.stringify(dataDir)} });
        console.log("opened");
      } catch (error) {
        console.log(error.code + ": " + error.message);
      }`;
      const result = spawnSync(older?.path ?? "", ["--input-type=module", "-e", script], {
        encoding: "utf8",
      });
      expect(result.signal).toBeNull();
      expect(result.stdout.trim()).toBe(
        `STORE_UNAVAILABLE: ${nodeTooOld(older?.version ?? "", older?.path ?? "")}`,
      );
    },
  );
});
