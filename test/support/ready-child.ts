import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

/**
 * Runs a TypeScript child (`script`, with tsx) that prints `ready` once set up: `ready` resolves then,
 * `exit` with all it printed once it exits 0 (rejects with its stderr otherwise).
 */
export function readyChild(
  script: URL,
  args: string[],
): { proc: ChildProcessWithoutNullStreams; ready: Promise<void>; exit: Promise<string> } {
  const proc = spawn(process.execPath, ["--import", "tsx", script.pathname, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const ready = new Promise<void>((resolve) =>
    proc.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("ready")) resolve();
    }),
  );
  const exit = new Promise<string>((resolve, reject) =>
    proc.on("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`child failed (${code}): ${err}`)),
    ),
  );
  return { proc, ready, exit };
}
