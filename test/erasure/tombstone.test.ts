import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { TOMBSTONE_FILE } from "../../src/lifecycle/erasure-tombstones.js";
import type { Envelope } from "../../src/model/envelope.js";

function dm(text: string, platformMessageId: string): Envelope {
  return {
    channel: "telegram",
    chat: { type: "direct", id: "4242" },
    sender: { id: "4242" },
    text,
    platformMessageId,
  };
}

describe("the erasure tombstone", () => {
  let dir: string;
  let engine: Engine | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-tombstone-"));
  });

  afterEach(async () => {
    await engine?.close();
    engine = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const open = () =>
    createEngine({
      dataDir: dir,
      store: { backend: "sqlite", path: join(dir, "sessions.db") },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });

  it("refuses a redelivered message of an erased subject, after a restart too, and takes a new one", async () => {
    let e = await open();
    engine = e;
    await e.turn(dm("first", "msg-9001"));
    await e.turn(dm("second", "msg-9002"));
    const receipt = await e.forget({ subject: "telegram:4242" });
    expect(receipt.sessions).toBe(1);
    expect(receipt.tombstone).toEqual({ file: TOMBSTONE_FILE, messages: 2 });

    // The tombstone names no one in clear: neither the account nor the message ids.
    const path = join(dir, TOMBSTONE_FILE);
    const text = readFileSync(path, "utf8");
    // Only outside the hex of the hashes and the secret: a random hash holds "4242" once in ~200 runs.
    const outsideHex = text.replace(/[0-9a-f]{64}/g, "");
    for (const clear of ["4242", "msg-9001", "msg-9002", "telegram"]) expect(outsideHex).not.toContain(clear);
    expect(statSync(path).mode & 0o777).toBe(0o600);

    await expect(e.turn(dm("first", "msg-9001"))).rejects.toMatchObject({ code: "SUBJECT_ERASED" });
    await e.close();
    e = await open();
    engine = e;
    await expect(e.turn(dm("second", "msg-9002"))).rejects.toMatchObject({ code: "SUBJECT_ERASED" });
    await expect(e.start(dm("second", "msg-9002"))).rejects.toMatchObject({ code: "SUBJECT_ERASED" });
    expect(await e.sessions.get("telegram:4242")).toBeUndefined();
    // A new message of the person is a new conversation.
    const fresh = await e.turn(dm("hello again", "msg-9003"));
    expect(fresh.reply?.content).toContain("hello again");
    expect((await e.history("telegram:4242")).map((m) => m.type === "message" && m.content)).not.toContain(
      "first",
    );
  });
});
