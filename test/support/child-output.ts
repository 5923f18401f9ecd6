import type { ChildProcess } from "node:child_process";

/** Resolves with the first match of `pattern` in what the child printed so far (`output.text`, kept by the caller). */
export function waitFor(
  child: ChildProcess,
  pattern: RegExp,
  output: { text: string },
): Promise<RegExpMatchArray> {
  return new Promise((resolvePromise, reject) => {
    const check = () => {
      const match = pattern.exec(output.text);
      if (match) resolvePromise(match);
    };
    child.stdout?.on("data", check);
    child.stderr?.on("data", check);
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${output.text}`)));
    child.on("error", (error) => reject(new Error(`could not start: ${error.message}`)));
    check();
  });
}
