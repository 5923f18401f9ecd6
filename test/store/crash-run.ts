// The store contract's child processes (src/store/testing/children.ts) for this repository's own tests,
// opening a store by its config (open-config.ts).
import * as children from "../../src/store/testing/children.js";
import { configChild } from "./open-config.js";

export type { Ack } from "../../src/store/testing/children.js";
export { missingAcks, PID_1 } from "../../src/store/testing/children.js";

/** How to start one of this directory's child scripts under tsx (or under `prefix`). */
export function nodeCommand(script: string, args: string[], prefix: string[] = []): [string, string[]] {
  const node = [process.execPath, "--import", "tsx", new URL(script, import.meta.url).pathname, ...args];
  return prefix.length === 0 ? [node[0]!, node.slice(1)] : [prefix[0]!, [...prefix.slice(1), ...node]];
}

/** The command of a child that appends to 20 sessions of the store of `config` until it is killed. */
export const crashCommand = (config: unknown): [string, string[]] =>
  children.childCommand({ mode: "crash", store: configChild(config) });

/** Appends to the store of `config` in a child and kills it with SIGKILL after `count` acknowledgements. */
export const runAndKill = (config: unknown, count: number, prefix: string[] = []) =>
  children.runAndKill(configChild(config), count, prefix);

/** Opens the store of `config` in a child: its PID, and the `<seq> <id>` of every entry by key. */
export const reopenInChild = (config: unknown, prefix: string[] = []) =>
  children.reopenInChild(configChild(config), prefix);
