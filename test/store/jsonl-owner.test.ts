import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Ack, nodeCommand, runAndKill } from "./crash-run.js";

/** PID 1 of a new PID namespace each time, as a container's gateway is on every start. */
const PID_1 = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL"];
const canUnshare = spawnSync("unshare", [...PID_1, "true"]).status === 0;

function reopen(dir: string, prefix: string[]): Promise<{ pid: number; found: Record<string, string[]> }> {
  const [command, args] = nodeCommand("./jsonl-reopen-child.ts", [dir], prefix);
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

/** A power cut on top of the SIGKILL: the session files were never fsync'd (no checkpoint yet). */
const dropSessionFiles = (dir: string) => {
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".jsonl"))) truncateSync(join(dir, name), 0);
};

const missing = (acks: Ack[], found: Record<string, string[]>) =>
  acks.filter((a) => !(found[a.key] ?? []).includes(`${a.seq} ${a.id}`));

describe("JSONL journal ownership", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-owner-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.runIf(canUnshare)(
    "replays its predecessor's journal after a crash under the same PID (PID 1 in a container, both times)",
    async () => {
      const acked = await runAndKill({ backend: "jsonl", path: dir }, 2000, PID_1);
      expect(acked.length).toBeGreaterThanOrEqual(2000);
      dropSessionFiles(dir);
      const { pid, found } = await reopen(dir, PID_1);
      expect(pid).toBe(1);
      expect(missing(acked, found)).toEqual([]);
    },
    300_000,
  );

  it("two processes on one directory: the second leaves the live writer's journal alone", async () => {
    // The writer stays alive (it is killed only after the reader has opened): its journal is its own.
    const [command, args] = nodeCommand("./crash-child.ts", [
      JSON.stringify({ backend: "jsonl", path: dir }),
    ]);
    const writer = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    const lines: string[] = [];
    await new Promise<void>((resolve) => {
      let buffer = "";
      writer.stdout.on("data", (c: Buffer) => {
        buffer += c.toString();
        const parts = buffer.split("\n");
        buffer = parts.pop() ?? "";
        lines.push(...parts);
        if (lines.length >= 500) resolve();
      });
    });
    const journals = () => readdirSync(join(dir, ".sessiond")).filter((n) => n.startsWith("journal-"));
    const before = journals();
    expect(before).toHaveLength(1);
    await reopen(dir, []);
    expect(journals()).toEqual(before);
    const exited = new Promise((resolve) => writer.on("exit", resolve));
    writer.kill("SIGKILL");
    await exited;
    const acked: Ack[] = lines.map((l) => {
      const [key, seq, id] = l.split(" ");
      return { key: key!, seq: Number(seq), id: id! };
    });
    dropSessionFiles(dir);
    const { found } = await reopen(dir, []);
    expect(missing(acked, found)).toEqual([]);
  }, 300_000);
});
