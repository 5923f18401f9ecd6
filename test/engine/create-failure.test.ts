import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "sessiond-create-failure-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The files of this process open under `dir`. */
function openFilesUnder(path: string): string[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(path) ? [target] : [];
    } catch {
      return [];
    }
  });
}

it("closes the store it opened when a later step fails (a corrupt runtime-sessions file)", async () => {
  writeFileSync(
    join(dir, "runtime-sessions.db"),
    "this is not a SQLite database, but long enough to be read as one",
  );
  await expect(createEngine({ dataDir: dir })).rejects.toThrow();
  expect(openFilesUnder(join(dir, "sessiond.db"))).toEqual([]);
});
