import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Ack, crashCommand, missingAcks, reopenInChild } from "./crash-run.js";

/** A power cut on top of the SIGKILL: the session files were never fsync'd (no checkpoint yet). */
const dropSessionFiles = (dir: string) => {
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".jsonl"))) truncateSync(join(dir, name), 0);
};

describe("JSONL journal ownership", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-owner-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("two processes on one directory: the second leaves the live writer's journal alone", async () => {
    // The writer stays alive (it is killed only after the reader has opened): its journal is its own.
    const config = { backend: "jsonl", path: dir };
    const [command, args] = crashCommand(config);
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
    await reopenInChild(config);
    expect(journals()).toEqual(before);
    const exited = new Promise((resolve) => writer.on("exit", resolve));
    writer.kill("SIGKILL");
    await exited;
    const acked: Ack[] = lines.map((l) => {
      const [key, seq, id] = l.split(" ");
      return { key: key!, seq: Number(seq), id: id! };
    });
    dropSessionFiles(dir);
    const { found } = await reopenInChild(config);
    expect(missingAcks(acked, found)).toEqual([]);
  }, 300_000);
});
