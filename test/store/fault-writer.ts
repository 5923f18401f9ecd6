import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { nodeCommand } from "./crash-run.js";

/** How a write was answered: the entry's id, or the error's code and `details.outcome`. */
export interface WriteAnswer {
  id?: string;
  code?: string;
  outcome?: string;
}

/**
 * A writer on a store whose disk can be made to fail, for the contract's fault cases. It runs where the
 * fault can be injected: in this process through a file layer (JSONL), or in a child under an LD_PRELOAD
 * layer (SQLite, whose fsyncs happen inside the library).
 */
export interface FaultyWriter {
  /** Appends one message to `key` (strict durability; the key's session is created when missing). */
  append(key: string, content: string): Promise<WriteAnswer>;
  /** From now on fsyncs fail with EIO, as a failing disk's do (at least the next one)... */
  failFsyncs(): void;
  /** ...until this: the disk "recovers", fsyncs succeed again. */
  heal(): void;
  close(): Promise<void>;
}

export const faultInit = { agent: "main", channel: "faults", createdBy: "u1" };

export function answerOf(error: unknown): WriteAnswer {
  const e = error as { code?: string; details?: { outcome?: string } };
  return { code: e.code, outcome: e.details?.outcome };
}

/**
 * A FaultyWriter in a child (fault-writer-child.ts) that opens `config` with `env` (the fault layer's);
 * `control` switches the layer's faults on and off from here.
 */
export function childFaultyWriter(
  config: unknown,
  env: NodeJS.ProcessEnv,
  control: { arm: () => void; disarm: () => void },
): FaultyWriter {
  const [command, args] = nodeCommand("./fault-writer-child.ts", [JSON.stringify(config)]);
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], env });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const answers = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const ask = async (request: object): Promise<WriteAnswer> => {
    child.stdin.write(`${JSON.stringify(request)}\n`);
    const next = await answers.next();
    if (next.done) throw new Error(`the faulty writer exited: ${stderr}`);
    return JSON.parse(next.value) as WriteAnswer;
  };
  return {
    append: (key, content) => ask({ op: "append", key, content }),
    failFsyncs: control.arm,
    heal: control.disarm,
    close: async () => {
      await ask({ op: "close" });
      child.stdin.end();
      const code = await exited;
      if (code !== 0) throw new Error(`the faulty writer exited with ${code}: ${stderr}`);
    },
  };
}
