import { execFile, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** What a test reads from a guide: its fenced blocks by language, in the order a reader meets them. */
export interface Guide {
  /** The lines of every ```sh block, block by block. */
  sh: string[][];
  /** Every ```sh block whole, for one that bash must run as one script (a here-document). */
  shBlocks: string[];
  yaml: string[];
  text: string[];
  json: string[];
}

export function readGuide(path: string): Guide {
  return parseGuide(readFileSync(path, "utf8"));
}

/** `readGuide` of a guide's text, or of one section of it. */
export function parseGuide(markdown: string): Guide {
  const guide: Guide = { sh: [], shBlocks: [], yaml: [], text: [], json: [] };
  for (const [, lang, body] of markdown.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)) {
    const text = (body as string).replace(/\n$/, "");
    if (lang === "sh") {
      guide.sh.push(text.split("\n").filter((line) => line.trim() !== ""));
      guide.shBlocks.push(text);
    } else if (lang === "yaml" || lang === "text" || lang === "json") guide[lang].push(text);
  }
  return guide;
}

const CLI = resolve("dist/src/cli/main.js");

/**
 * A directory holding a `sessiond` that runs the build, to put first on a guide's PATH so that its
 * `sessiond …` lines run as written; and its removal.
 */
export function sessiondOnPath(): { path: string; remove(): void } {
  const bin = mkdtempSync(join(tmpdir(), "sessiond-guide-bin-"));
  const script = join(bin, "sessiond");
  writeFileSync(script, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(script, 0o755);
  return {
    path: `${bin}${delimiter}${process.env.PATH ?? ""}`,
    remove: () => rmSync(bin, { recursive: true, force: true }),
  };
}

/** The environment a guide's commands run in: this one without sessiond's own variables, plus `extra`. */
export function guideEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("SESSIOND_") && !name.startsWith("PG")) env[name] = value;
  }
  return { ...env, ...extra };
}

/** One shell line as bash runs it: its output, or a failure naming the line and what it printed. */
export async function shell(line: string, options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<string> {
  try {
    const { stdout } = await run("bash", ["-c", line], { ...options, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${line}\nfailed: ${stderr ?? ""}${stdout ?? ""}`);
  }
}

/** The value a `export NAME=…` line gives NAME, computed by bash. */
export async function exported(line: string, options: { cwd: string; env: NodeJS.ProcessEnv }) {
  const name = /^export (\w+)=/.exec(line)?.[1];
  if (!name) throw new Error(`not an export line: ${line}`);
  return (await shell(`${line}; printf %s "$${name}"`, options)).trim();
}

export interface GuideServe {
  url: string;
  output: { text: string };
  pid: number;
  /** Resolves with the first whole printed line matching `pattern`. */
  printed(pattern: RegExp): Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** A guide's `sessiond serve …` line, run from the build in `cwd` on a port the OS picks. */
export async function serveLine(
  line: string,
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<GuideServe> {
  if (!line.startsWith("sessiond serve")) throw new Error(`not a serve line: ${line}`);
  // Never the guide's fixed port: another test may hold it.
  const args = [
    ...line
      .replace(/ --port \d+/, "")
      .split(/\s+/)
      .slice(1),
    "--port",
    "0",
  ];
  const child = spawn(process.execPath, [CLI, ...args], { ...options, stdio: ["ignore", "pipe", "pipe"] });
  const output = { text: "" };
  const watchers = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output.text += chunk.toString();
    for (const watch of watchers) watch();
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const printed = (pattern: RegExp) =>
    new Promise<string>((resolvePromise, reject) => {
      const watch = () => {
        const found = output.text
          .split("\n")
          .slice(0, -1)
          .find((l) => pattern.test(l));
        if (found !== undefined) {
          watchers.delete(watch);
          resolvePromise(found);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          watchers.delete(watch);
          reject(new Error(`${line} exited without printing ${pattern}: ${output.text}`));
        }
      };
      watchers.add(watch);
      child.once("exit", watch);
      watch();
    });
  const listening = await printed(/listening on http:\/\/127\.0\.0\.1:\d+/);
  return {
    url: /(http:\/\/\S+)/.exec(listening)?.[1] as string,
    output,
    pid: child.pid as number,
    printed,
    kill: async (signal = "SIGKILL") => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill(signal);
      await exited;
    },
  };
}
