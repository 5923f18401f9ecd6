import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";

// The process "dies" between emptying its journal for a removal and removing the file: the removal fails.
const removal = vi.hoisted(() => ({ fail: false }));
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const rmSync: typeof fs.rmSync = (path, options) => {
    if (removal.fail && String(path).endsWith(".jsonl")) throw new Error("the process died here");
    fs.rmSync(path, options);
  };
  return { ...fs, default: { ...fs, rmSync }, rmSync };
});

const init = (createdBy: string) => ({ agent: "main", channel: "telegram", createdBy });
const msg = (content: string): EntryInput => ({ type: "message", role: "user", content });

describe("JSONL store removal", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-removal-"));
    removal.fail = false;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("leaves a session whole when the process dies before its file is removed", async () => {
    const store = new JsonlStore({ path: dir });
    const keys = Array.from({ length: 10 }, (_, i) => `k:${i}`);
    await Promise.all(keys.map((key, i) => store.append(key, [msg(`${key} 0`)], { init: init(`u${i}`) })));
    // Busy batches: their bytes wait in memory for the session files.
    for (let round = 1; round <= 3; round++)
      await Promise.all(keys.map((key) => store.append(key, [msg(`${key} ${round}`)])));
    removal.fail = true;
    await expect(store.delete("k:0")).rejects.toThrow();
    removal.fail = false;
    const reader = new JsonlStore({ path: dir });
    const session = (await reader.getSession("k:0"))!;
    expect(
      (await reader.readEntries(session.id)).map((e) => (e.type === "message" ? e.content : "")),
    ).toEqual(["k:0 0", "k:0 1", "k:0 2", "k:0 3"]);
    await reader.close();
    await store.close();
  });
});
