import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { createEngine, type Engine, type EngineConfig } from "../../src/index.js";

// The bin users run: the bundle (scripts/bundle.mjs).
const CLI = fileURLToPath(new URL("../../dist/bundle/main.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A fresh directory per test, removed afterwards. */
export function useTempDir(): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-cli-"));
    dirs.push(dir);
    return dir;
  };
}

/** Runs the built CLI in `cwd` with no SESSIOND_* variables from the outer environment (but `env`'s). */
export function cli(
  cwd: string,
  args: readonly string[],
  options: { stdin?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("SESSIOND_"))),
    ...options.env,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

/** Opens the library on `dataDir`, runs `fn`, closes it so the CLI sees everything. */
export async function seed(
  dataDir: string,
  fn: (engine: Engine) => Promise<void>,
  config: EngineConfig = {},
): Promise<void> {
  const engine = await createEngine({ ...config, dataDir });
  try {
    await fn(engine);
  } finally {
    await engine.close();
  }
}

export function parseJson<T = unknown>(text: string): T {
  return JSON.parse(text) as T;
}
