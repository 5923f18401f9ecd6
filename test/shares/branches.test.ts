import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/index.js";
import { webChatOn } from "../support/envelopes.js";

let engine: Engine | undefined;
let dir = "";
afterEach(async () => {
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("share links on forks and rewinds", () => {
  it("shows a fork's inherited messages, and keeps showing the generation a rewind left", async () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-share-branches-"));
    engine = await createEngine({
      dataDir: dir,
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    await engine.turnWith(webChatOn("admin-s", "first question"), async () => "first answer");
    await engine.turnWith(webChatOn("admin-s", "second question"), async () => "second answer");
    const before = await engine.shares.create("admin-s");
    const { session } = await engine.fork("admin-s", { toKey: "admin-s-fork", atSeq: 2 });
    await engine.turnWith(webChatOn(session.key, "fork question"), async () => "fork answer");
    const fork = await engine.shares.view((await engine.shares.create(session.key)).id);
    expect(fork?.messages.map((m) => m.content)).toEqual([
      "first question",
      "first answer",
      "fork question",
      "fork answer",
    ]);
    await engine.rewind("admin-s", { toSeq: 3 });
    await engine.turnWith(webChatOn("admin-s", "another second question"), async () => "another answer");
    const pinned = await engine.shares.view(before.id);
    expect(pinned?.messages.map((m) => m.content)).toEqual([
      "first question",
      "first answer",
      "second question",
      "second answer",
    ]);
  });
});
