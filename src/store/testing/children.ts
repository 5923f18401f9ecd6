import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * How a child process opens the store under test: an ES module (a path or `file:` URL) that exports
 * `open(arg): Promise<Store>`, the argument (JSON), and the Node options the child needs to load the
 * module (e.g. `["--import", "tsx"]` for a `.ts` file).
 */
export interface ChildStore {
  module: string;
  arg?: unknown;
  execArgv?: string[];
}

/** What contract-child.ts is asked to do (see there). */
export type ChildRequest =
  | { mode: "crash" | "reopen"; store: ChildStore }
  | { mode: "append"; store: ChildStore; keys: string[]; rounds: number; tag: string };

/** An acknowledged append, as a child printed it. */
export interface Ack {
  key: string;
  seq: number;
  id: string;
}

/** The child program beside this module: the source under tsx, or the build (dist/bundle, dist/src). */
function childProgram(): string[] {
  const here = import.meta.url;
  return here.endsWith(".ts")
    ? ["--import", "tsx", fileURLToPath(new URL("./contract-child.ts", here))]
    : [fileURLToPath(new URL("./contract-child.js", here))];
}

/**
 * The command that runs the contract's child for `request`: node itself, or under `prefix` (e.g.
 * `unshare --pid --fork --mount-proc --kill-child`, which makes it PID 1 of a new PID namespace, as a
 * container's gateway is).
 */
export function childCommand(request: ChildRequest, prefix: string[] = []): [string, string[]] {
  const node = [
    process.execPath,
    ...(request.store.execArgv ?? []),
    ...childProgram(),
    JSON.stringify(request),
  ];
  return prefix.length === 0 ? [node[0]!, node.slice(1)] : [prefix[0]!, [...prefix.slice(1), ...node]];
}

export const parseAck = (line: string): Ack => {
  const [key, seq, id] = line.split(" ");
  return { key: key!, seq: Number(seq), id: id! };
};

/** Calls `onLine` with each line the child prints; collects its stderr for errors. */
function lines(child: ChildProcess, onLine: (line: string) => void): { stderr: () => string } {
  let buffer = "";
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const line of parts) onLine(line);
  });
  return { stderr: () => stderr };
}

/** Starts a `crash` child, collects its acknowledgements and kills it with SIGKILL after `count` of them. */
export function runAndKill(store: ChildStore, count: number, prefix: string[] = []): Promise<Ack[]> {
  const [command, args] = childCommand({ mode: "crash", store }, prefix);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  const acks: Ack[] = [];
  let killed = false;
  const out = lines(child, (line) => {
    acks.push(parseAck(line));
    if (acks.length >= count && child.exitCode === null && !killed) {
      // Under a prefix, the writer is its child: killed itself, so that the prefix exits only once it is gone.
      const writer = prefix.length === 0 ? undefined : childOf(child.pid!);
      killed = true;
      if (writer === undefined) child.kill("SIGKILL");
      else process.kill(writer, "SIGKILL");
    }
  });
  return new Promise((resolve, reject) => {
    child.on("exit", (code, signal) => {
      // unshare reports its child's SIGKILL as an exit of its own (it cannot raise SIGKILL on itself).
      if (signal === "SIGKILL" || killed) resolve(acks);
      else reject(new Error(`the crash child exited by itself (code ${code}): ${out.stderr()}`));
    });
  });
}

function childOf(pid: number): number | undefined {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "latin1").trim().split(" ");
  return children[0] ? Number(children[0]) : undefined;
}

/** PID 1 of a new PID namespace each time, as a container's gateway is on every start. */
export const PID_1 = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL"];
let unshareWorks: boolean | undefined;
/** Whether this machine lets an unprivileged process start a child as PID 1 (Linux, `unshare`). */
export const canUnshare = (): boolean =>
  (unshareWorks ??= spawnSync("unshare", [...PID_1, "true"]).status === 0);

/** Opens the store in a `reopen` child: its PID, and the `<seq> <id>` of every entry by key. */
export function reopenInChild(
  store: ChildStore,
  prefix: string[] = [],
): Promise<{ pid: number; found: Record<string, string[]> }> {
  const [command, args] = childCommand({ mode: "reopen", store }, prefix);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let found: { pid: number; found: Record<string, string[]> } | undefined;
  const out = lines(child, (line) => {
    found = JSON.parse(line) as typeof found;
  });
  return new Promise((resolve, reject) =>
    child.on("exit", (code) =>
      code === 0 && found ? resolve(found) : reject(new Error(`the reopen child failed: ${out.stderr()}`)),
    ),
  );
}

/** An `append` child: `ready` once it has opened the store; `go()` starts its rounds; `done` has its acks. */
export function startAppender(
  store: ChildStore,
  keys: string[],
  rounds: number,
  tag: string,
): { ready: Promise<void>; go: () => void; done: Promise<Ack[]> } {
  const [command, args] = childCommand({ mode: "append", store, keys, rounds, tag });
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
  const acks: Ack[] = [];
  let finished = false;
  let opened: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const out = lines(child, (line) => {
    if (line === "ready") opened();
    else if (line === "done") finished = true;
    else acks.push(parseAck(line));
  });
  const done = new Promise<Ack[]>((resolve, reject) =>
    child.on("exit", (code) => {
      opened();
      if (code === 0 && finished) resolve(acks);
      else reject(new Error(`the second process failed (code ${code}): ${out.stderr()}`));
    }),
  );
  return { ready, go: () => child.stdin?.end("go\n"), done };
}

/** The acknowledged appends that `found` lacks. */
export const missingAcks = (acks: Ack[], found: Record<string, string[]>): Ack[] =>
  acks.filter((a) => !(found[a.key] ?? []).includes(`${a.seq} ${a.id}`));

/**
 * Runs `write` again while it is refused with STORE_BUSY (another writer kept changing its session while
 * it was planned: nothing of it was written, and the error says to retry), at most `tries` times.
 */
export async function retryBusy<T>(write: () => Promise<T>, tries = 100): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await write();
    } catch (error) {
      if ((error as { code?: unknown }).code !== "STORE_BUSY" || i >= tries) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
    }
  }
}
