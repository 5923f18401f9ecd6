import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach } from "vitest";

/** The scripts that speak `claude`'s stream-json and `codex exec --experimental-json` protocols. */
export const FAKE_CLAUDE = fileURLToPath(new URL("./fake-claude.mjs", import.meta.url));
export const FAKE_CODEX = fileURLToPath(new URL("./fake-codex.mjs", import.meta.url));

export interface FakeCliState {
  dir: string;
  /** Every invocation the fake CLI logged, oldest first. */
  calls<T = Record<string, unknown>>(): T[];
}

/**
 * A fresh state directory per test for a fake CLI, named to it through `variable` (the SDKs pass the
 * parent's environment to the child process).
 */
export function useFakeCliState(variable: "FAKE_CLAUDE_STATE" | "FAKE_CODEX_STATE"): FakeCliState {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-fake-cli-"));
    process.env[variable] = dir;
  });
  afterEach(() => {
    delete process.env[variable];
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    calls<T>() {
      let text = "";
      try {
        text = readFileSync(join(dir, "calls.jsonl"), "utf8");
      } catch {
        return [];
      }
      return text
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as T);
    },
  };
}
