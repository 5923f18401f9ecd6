import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { FaultyWriter, WriteAnswer } from "../../src/store/testing/factory.js";
import { nodeCommand } from "./crash-run.js";

export {
  answerOf,
  type FaultyWriter,
  faultInit,
  type WriteAnswer,
} from "../../src/store/testing/factory.js";

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
    fail: control.arm,
    heal: control.disarm,
    close: async () => {
      await ask({ op: "close" });
      child.stdin.end();
      const code = await exited;
      if (code !== 0) throw new Error(`the faulty writer exited with ${code}: ${stderr}`);
    },
  };
}
