import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Envelope } from "../../src/model/envelope.js";
import type { Inbox } from "../../src/model/inbox.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { MemoryInbox } from "../../src/store/memory/inbox.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const big: Envelope = {
  channel: "webhook",
  chat: { type: "direct", id: "a" },
  sender: { id: "a" },
  text: "lorem ipsum ".repeat(80_000),
};

function storeInbox(store: { inbox(): Inbox; close(): Promise<void> }) {
  return { inbox: store.inbox(), close: () => store.close() };
}

/**
 * An admission copies its envelope once: read back from its JSON (so that it is what a restart reads, and
 * shared with nothing). The memory and JSONL stores copied that copy again when they kept it.
 */
describe("an admitted input's envelope is copied once", () => {
  const jsonl = () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-inbox-copies-"));
    dirs.push(dir);
    return new JsonlStore({ path: dir });
  };
  const inboxes: Array<[string, () => { inbox: Inbox; close(): Promise<void> }]> = [
    ["the memory store", () => storeInbox(new MemoryStore())],
    ["the JSONL store", () => storeInbox(jsonl())],
    ["the memory inbox", () => ({ inbox: new MemoryInbox(), close: async () => {} })],
  ];

  for (const [name, open] of inboxes.slice(0, 2)) {
    it(`by ${name}: a transition reads the item's state, not a copy of its envelope`, async () => {
      const { inbox, close } = open();
      const { item } = await inbox.admit({ key: "webhook:a", envelope: big, at: 1 });
      const clones = vi.spyOn(globalThis, "structuredClone");
      const parse = vi.spyOn(JSON, "parse");
      expect(await inbox.transition(item.id, "running", 2)).toBe(true);
      expect(await inbox.transition(item.id, "done", 3, { error: { code: "X", message: "kept" } })).toBe(
        true,
      );
      expect(await inbox.transition(item.id, "running", 4)).toBe(false);
      const copied = clones.mock.calls.filter(
        ([value]) => typeof value === "object" && value && "envelope" in value,
      );
      expect(copied).toHaveLength(0);
      // At most the stored envelope's first read from its JSON (the JSONL file's line holds the whole item).
      expect(
        parse.mock.calls.filter(([text]) => typeof text === "string" && text.length > 900_000).length,
      ).toBeLessThanOrEqual(1);
      vi.restoreAllMocks();
      expect((await inbox.get(item.id))?.state).toBe("done");
      await close();
    });
  }

  it("by the SQLite store: a transition reads the row's state, never its envelope", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-inbox-copies-"));
    dirs.push(dir);
    const { inbox, close } = storeInbox(new SqliteStore({ path: join(dir, "s.db") }));
    const { item } = await inbox.admit({ key: "webhook:a", envelope: big, at: 1 });
    const parse = vi.spyOn(JSON, "parse");
    expect(await inbox.transition(item.id, "running", 2)).toBe(true);
    expect(await inbox.transition(item.id, "done", 3)).toBe(true);
    expect(await inbox.transition(item.id, "running", 4)).toBe(false);
    expect(parse.mock.calls.filter(([text]) => typeof text === "string" && text.length > 900_000)).toEqual(
      [],
    );
    vi.restoreAllMocks();
    expect((await inbox.get(item.id))?.state).toBe("done");
    await close();
  });

  const bigParses = (parse: { mock: { calls: unknown[][] } }) =>
    parse.mock.calls.filter(([text]) => typeof text === "string" && text.length > 900_000).length;

  for (const [name, open] of inboxes) {
    it(`by ${name}: no structured clone of it; read back from its JSON once, when read`, async () => {
      const { inbox, close } = open();
      const clones = vi.spyOn(globalThis, "structuredClone");
      const parse = vi.spyOn(JSON, "parse");
      const { admitted, item } = await inbox.admit({ key: "webhook:a", envelope: big, at: 1 });
      expect(admitted).toBe(true);
      expect(clones).not.toHaveBeenCalled();
      expect(bigParses(parse)).toBeLessThanOrEqual(1);
      vi.restoreAllMocks();
      expect(item.envelope).toEqual(big);
      expect((await inbox.get(item.id))?.envelope).toEqual(big);
      await close();
    });
  }

  it("by the SQLite store, which stores the JSON: the admission does not parse it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-inbox-copies-"));
    dirs.push(dir);
    const store = new SqliteStore({ path: join(dir, "sessiond.db") });
    const inbox = store.inbox();
    const parse = vi.spyOn(JSON, "parse");
    const { admitted, item } = await inbox.admit({ key: "webhook:a", envelope: big, at: 1 });
    expect(admitted).toBe(true);
    expect(bigParses(parse)).toBe(0);
    vi.restoreAllMocks();
    expect(await inbox.transition(item.id, "running", 2)).toBe(true);
    expect((await inbox.get(item.id))?.envelope).toEqual(big);
    expect(item.envelope).toEqual(big);
    await store.close();
  });
});
