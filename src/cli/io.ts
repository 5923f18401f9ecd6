import { isatty } from "node:tty";

/** What a command may touch of the process; `main.ts` passes the real one. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  stdin: NodeJS.ReadableStream;
  stdinIsTTY: boolean;
  /** Whether stderr is a terminal (progress bars); absent means no. */
  stderrIsTTY?: boolean;
  env: NodeJS.ProcessEnv;
  cwd: string;
  now(): number;
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    // Opened by the commands that read it: setting up process.stdin costs every other command start-up time.
    get stdin() {
      return process.stdin;
    },
    stdinIsTTY: isatty(0),
    stderrIsTTY: process.stderr.isTTY === true,
    env: process.env,
    cwd: process.cwd(),
    now: () => Date.now(),
  };
}
