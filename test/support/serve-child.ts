import { type ChildProcess, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { afterEach } from "vitest";
import { waitFor } from "./child-output.js";

const CLI = resolve("dist/src/cli/main.js");

export interface ServedGateway {
  child: ChildProcess;
  output: { text: string };
  /** Resolves with the gateway's base URL once it listens. */
  listening(): Promise<string>;
  /** SIGKILLs it unless it has exited already. */
  kill(): void;
}

/**
 * `sessiond serve` from the build, in a child process on `dir` (its data dir, and `sessiond.yaml` there
 * as the config), with `token` as SESSIOND_TOKEN and `env` added; what it prints is kept in `output.text`.
 */
export function serveGateway(
  dir: string,
  token: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): ServedGateway {
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--port", "0", "--config", join(dir, "sessiond.yaml"), ...args],
    {
      cwd: dir,
      env: { ...process.env, SESSIOND_TOKEN: token, SESSIOND_DATA_DIR: dir, SESSIOND_CONFIG: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output = { text: "" };
  const collect = (chunk: Buffer) => {
    output.text += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  return {
    child,
    output,
    listening: async () => {
      const [, url] = await waitFor(child, /listening on (http:\/\/127\.0\.0\.1:\d+)/, output);
      return url as string;
    },
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/**
 * For a test file that starts `serve` children with one token: `serve(dir)` starts one, `cleanups` takes
 * what else to undo; both are undone (last first) after each test.
 */
export function servedGateways(token: string): {
  serve(dir: string): ServedGateway;
  cleanups: Array<() => Promise<void> | void>;
} {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    cleanups,
    serve: (dir) => {
      const served = serveGateway(dir, token);
      cleanups.push(() => served.kill());
      return served;
    },
  };
}
