import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import type { Entry } from "../../src/model/entry.js";
import { telegramDm } from "../support/envelopes.js";
import { fsyncFaultEnv } from "../support/fsync-faults.js";

type Step = {
  step: string;
  ids?: string[];
  code?: string;
  outcome?: string;
  ok?: boolean;
  failures?: unknown[];
};

/** Runs sqlite-fsync-child.ts under the fault layer; resolves with its steps once it exited. */
function runChild(dataDir: string, mode: string): Promise<Step[]> {
  const arm = join(dataDir, "fail-fsyncs");
  const proc = spawn(
    process.execPath,
    ["--import", "tsx", new URL("./sqlite-fsync-child.ts", import.meta.url).pathname, dataDir, arm, mode],
    { stdio: ["ignore", "pipe", "pipe"], env: fsyncFaultEnv(join(dataDir, "sessiond.db-wal"), arm) },
  );
  let out = "";
  let err = "";
  proc.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  proc.stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  return new Promise((resolve, reject) =>
    proc.on("exit", (code) =>
      code === 0
        ? resolve(
            out
              .trim()
              .split("\n")
              .map((line) => JSON.parse(line) as Step),
          )
        : reject(new Error(`child failed (${code}): ${err}`)),
    ),
  );
}

describe("SQLite store under a failing disk (EIO from the WAL's fsync)", () => {
  let dataDir: string;
  let engine: Engine | undefined;
  const reopen = async () => {
    engine = await createEngine({ dataDir, titles: { enabled: false }, lifecycle: { sweepIntervalMs: 0 } });
    return engine;
  };
  const history = async () => (await engine!.history("telegram:42")) as Entry[];

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-eio-"));
  });
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("a failed inline fsync stops the store: the write's outcome is unknown, every later write refused though fsyncs succeed again", async () => {
    const steps = await runChild(dataDir, "reply");
    expect(steps.find((s) => s.step === "turn")).toMatchObject({ code: "STORE_FAILED", outcome: "unknown" });
    expect(steps.find((s) => s.step === "after")).toMatchObject({
      code: "STORE_FAILED",
      outcome: "not-written",
    });
    expect(steps.at(-1)).toEqual({ step: "closed" });

    const reopened = await reopen();
    const acknowledged = steps.find((s) => s.step === "acknowledged")!.ids!;
    const ids = (await history()).map((e) => e.id);
    for (const id of acknowledged) expect(ids).toContain(id);
    // The retry of the turn whose reply had an unknown outcome stores no second reply or usage.
    await reopened.turnWith(telegramDm("second", "m-2"), async () => ({
      content: "second reply",
      usage: { inputTokens: 5, outputTokens: 2 },
    }));
    const after = await history();
    expect(after.filter((e) => e.type === "message" && e.role === "assistant")).toHaveLength(2);
    expect(after.filter((e) => e.type === "usage")).toHaveLength(2);
    expect(after.filter((e) => e.type === "message" && e.role === "user")).toHaveLength(2);
  });

  it("a failed turn's note whose fsync failed is not stored twice when the turn is retried", async () => {
    const steps = await runChild(dataDir, "note");
    expect(steps.find((s) => s.step === "turn")).toMatchObject({ code: "STORE_FAILED", outcome: "unknown" });
    expect(steps.find((s) => s.step === "after")).toMatchObject({
      code: "STORE_FAILED",
      outcome: "not-written",
    });

    const reopened = await reopen();
    const failing = async () => {
      throw new Error("the runtime is down");
    };
    await expect(reopened.turnWith(telegramDm("second", "m-2"), failing)).rejects.toMatchObject({
      code: "TURN_FAILED",
    });
    const notes = (await history()).filter((e) => e.type === "note" && e.code === "TURN_FAILED");
    expect(notes).toHaveLength(1);
    const answered = await reopened.turnWith(telegramDm("second", "m-2"), async () => "at last");
    expect(answered.reply?.content).toBe("at last");
  });

  it("a failed fsync behind a batch (the durable barrier) stops the store the same way", async () => {
    const steps = await runChild(dataDir, "batch");
    const failures = steps.find((s) => s.step === "batch")!.failures!;
    expect(failures).toHaveLength(20);
    for (const f of failures) expect(f).toMatchObject({ code: "STORE_FAILED" });
    expect(failures).toContainEqual({ code: "STORE_FAILED", outcome: "unknown" });
    expect(steps.find((s) => s.step === "after")).toMatchObject({
      code: "STORE_FAILED",
      outcome: "not-written",
    });

    await reopen();
    const acknowledged = steps.find((s) => s.step === "acknowledged")!.ids!;
    const ids = (await history()).map((e) => e.id);
    for (const id of acknowledged) expect(ids).toContain(id);
  });

  it("a failed fsync in sync() (its checkpoint) stops the store too", async () => {
    const steps = await runChild(dataDir, "sync");
    expect(steps.find((s) => s.step === "sync")).toMatchObject({ code: "STORE_FAILED" });
    expect(steps.find((s) => s.step === "after")).toMatchObject({
      code: "STORE_FAILED",
      outcome: "not-written",
    });
  });
});
