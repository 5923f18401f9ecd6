import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

export interface Ack {
  key: string;
  seq: number;
  id: string;
}

/**
 * How to start a child: node itself, or under `prefix` (e.g. `unshare --pid --fork --mount-proc
 * --kill-child`, which makes it PID 1 of a new PID namespace, as a container's gateway is).
 */
export function nodeCommand(script: string, args: string[], prefix: string[] = []): [string, string[]] {
  const node = [process.execPath, "--import", "tsx", new URL(script, import.meta.url).pathname, ...args];
  return prefix.length === 0 ? [node[0]!, node.slice(1)] : [prefix[0]!, [...prefix.slice(1), ...node]];
}

/** Starts crash-child.ts, collects its acknowledgements and kills it with SIGKILL after `count` of them. */
export function runAndKill(config: unknown, count: number, prefix: string[] = []): Promise<Ack[]> {
  const [command, args] = nodeCommand("./crash-child.ts", [JSON.stringify(config)], prefix);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  const acks: Ack[] = [];
  let killed = false;
  let buffer = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        const [key, seq, id] = line.split(" ");
        acks.push({ key: key!, seq: Number(seq), id: id! });
      }
      if (acks.length >= count && child.exitCode === null && !child.killed) {
        // Under a prefix, the writer is its child: killed itself, so that the prefix exits only once it is gone.
        const writer = prefix.length === 0 ? undefined : childOf(child.pid!);
        killed = true;
        if (writer === undefined) child.kill("SIGKILL");
        else process.kill(writer, "SIGKILL");
      }
    });
    child.on("exit", (code, signal) => {
      // unshare reports its child's SIGKILL as an exit of its own (it cannot raise SIGKILL on itself).
      if (signal === "SIGKILL" || killed) resolve(acks);
      else reject(new Error(`crash child exited by itself (code ${code}): ${stderr}`));
    });
  });
}

function childOf(pid: number): number | undefined {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "latin1").trim().split(" ");
  return children[0] ? Number(children[0]) : undefined;
}

/** PID 1 of a new PID namespace each time, as a container's gateway is on every start. */
export const PID_1 = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL"];
export const canUnshare = spawnSync("unshare", [...PID_1, "true"]).status === 0;

/** Opens the store of `config` in a child (reopen-child.ts): its PID, and the `<seq> <id>` of every entry by key. */
export function reopenInChild(
  config: unknown,
  prefix: string[] = [],
): Promise<{ pid: number; found: Record<string, string[]> }> {
  const [command, args] = nodeCommand("./reopen-child.ts", [JSON.stringify(config)], prefix);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  return new Promise((resolve, reject) =>
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err)))),
  );
}

/** The acknowledged appends that `found` lacks. */
export const missingAcks = (acks: Ack[], found: Record<string, string[]>): Ack[] =>
  acks.filter((a) => !(found[a.key] ?? []).includes(`${a.seq} ${a.id}`));
