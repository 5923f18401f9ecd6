import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  applyMerges,
  forgetIdentity,
  LINK_SNAPSHOT_FILE,
  linkSnapshotPath,
  pendingMerges,
  readLinkSnapshot,
  reconcileIdentityLinks,
  storedKeys,
  writeLinkSnapshot,
} from "../../src/lifecycle/identity-changes.js";
import { isSessiondError, type SessiondError } from "../../src/model/errors.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { openStore } from "../../src/store/open.js";
import type { Store } from "../../src/store/store.js";

async function rejection(promise: Promise<unknown>): Promise<SessiondError> {
  try {
    await promise;
  } catch (e) {
    if (isSessiondError(e)) return e;
    throw e;
  }
  throw new Error("expected a SessiondError");
}

const alice = { alice: ["telegram:1", "discord:dm:2"] };

describe("link snapshot", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-links-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("is undefined before the first write, then round-trips", async () => {
    expect(await readLinkSnapshot(dir)).toBeUndefined();
    const written = await writeLinkSnapshot(dir, alice, Date.UTC(2026, 0, 2));
    expect(written).toEqual({ version: 1, links: alice, savedAt: "2026-01-02T00:00:00.000Z" });
    expect(await readLinkSnapshot(dir)).toEqual(written);
    await writeLinkSnapshot(dir, {});
    expect((await readLinkSnapshot(dir))?.links).toEqual({});
    expect(readdirSync(dir)).toEqual([LINK_SNAPSHOT_FILE]);
  });

  it("creates a missing data dir", async () => {
    const nested = join(dir, "a", "b");
    await writeLinkSnapshot(nested, alice);
    expect((await readLinkSnapshot(nested))?.links).toEqual(alice);
  });

  it("a failed write leaves the old snapshot and no temp file", async () => {
    const target = linkSnapshotPath(dir);
    mkdirSync(join(target, "occupied"), { recursive: true });
    const e = await rejection(writeLinkSnapshot(dir, alice));
    expect(e.code).toBe("STORE_UNAVAILABLE");
    expect(readdirSync(dir)).toEqual([LINK_SNAPSHOT_FILE]);
  });

  it("refuses invalid links without writing", async () => {
    const e = await rejection(writeLinkSnapshot(dir, { a: ["telegram:1"], b: ["TELEGRAM:1"] }));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(readdirSync(dir)).toEqual([]);
  });

  it.each([
    ["torn", '{"version":1,"links":{"alice":["telegram:1",'],
    ["garbage", "\u0000\u0000\u0000"],
    ["empty", ""],
    ["not an object", "[]"],
    ["unknown version", '{"version":2,"links":{}}'],
    ["bad links", '{"version":1,"links":{"alice":"telegram:1"}}'],
    ["account under two people", '{"version":1,"links":{"a":["telegram:1"],"b":["telegram:1"]}}'],
  ])("a %s file is STORE_CORRUPT, naming the file and the way out", async (_label, content) => {
    writeFileSync(linkSnapshotPath(dir), content);
    const e = await rejection(readLinkSnapshot(dir));
    expect(e.code).toBe("STORE_CORRUPT");
    expect(e.message).toContain(linkSnapshotPath(dir));
    expect(e.message).toMatch(/delete it/);
  });
});

const init = (createdBy: string, agent = "main") => ({
  agent,
  channel: createdBy.split(":")[0] ?? "x",
  chatType: "direct" as const,
  createdBy,
});
const say = (store: Store, key: string, content: string, agent = "main") =>
  store.append(key, [{ type: "message", role: "user", content }], { init: init(key, agent) });
const contents = async (store: Store, sessionId: string) =>
  (await store.readEntries(sessionId)).flatMap((e) => (e.type === "message" ? [e.content] : []));

for (const backend of ["memory", "sqlite"] as const) {
  describe(`identity link changes (${backend})`, () => {
    let dir: string;
    let store: Store;

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), "sessiond-relink-"));
      store =
        backend === "memory"
          ? new MemoryStore()
          : await openStore({ backend: "sqlite", path: join(dir, "sessiond.db") });
    });

    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("lists every key once across pages, archived-only keys included", async () => {
      for (let i = 0; i < 1005; i++) await say(store, `telegram:${i}`, "x");
      await store.reset("telegram:0", "manual");
      await store.archive("telegram:1", "manual");
      const keys = await storedKeys(store);
      expect(keys).toHaveLength(1005);
      expect(new Set(keys).size).toBe(1005);
      expect(keys).toContain("telegram:1");
    });

    it("reports the keys a new link orphans, applies them keeping both histories, then finds nothing", async () => {
      const telegram = await say(store, "telegram:1", "from telegram");
      await say(store, "discord:dm:2", "old discord 1");
      await store.reset("discord:dm:2", "manual");
      const discordCurrent = await say(store, "discord:dm:2", "old discord 2");
      await say(store, "telegram:99", "someone else");

      expect(await pendingMerges(store, {}, {})).toEqual([]);
      const merges = await pendingMerges(store, {}, alice);
      expect(merges).toEqual([{ from: "discord:dm:2", to: "telegram:1" }]);

      const applied = await applyMerges(store, merges);
      expect(applied).toEqual({ merges: [{ from: "discord:dm:2", to: "telegram:1", moved: 2 }], moved: 2 });

      expect(await store.getSession("discord:dm:2")).toBeUndefined();
      expect(await store.generations("discord:dm:2")).toEqual([]);
      const current = await store.getSession("telegram:1");
      expect(current?.id).toBe(telegram.session.id);
      expect(await contents(store, current!.id)).toEqual(["from telegram"]);

      const generations = await store.generations("telegram:1");
      expect(generations).toHaveLength(3);
      expect(generations.map((s) => s.key)).toEqual(["telegram:1", "telegram:1", "telegram:1"]);
      const moved = generations.find((s) => s.id === discordCurrent.session.id);
      expect(moved?.state).toBe("archived");
      expect(await contents(store, discordCurrent.session.id)).toEqual(["old discord 2"]);
      const oldest = generations.find((s) => s.id !== moved?.id && s.id !== current?.id)!;
      expect(await contents(store, oldest.id)).toEqual(["old discord 1"]);

      const next = await say(store, "telegram:1", "after relink");
      expect(next.session.id).toBe(telegram.session.id);
      expect(await pendingMerges(store, {}, alice)).toEqual([]);
      expect(await store.getSession("telegram:99")).toBeDefined();
    });

    it("keeps the agent prefix and the thread suffix, and reports keys that only have archived sessions", async () => {
      const agents = ["main", "ops"];
      await say(store, "main:discord:dm:2", "a");
      await say(store, "ops:discord:dm:2:thread:t1", "b", "ops");
      await say(store, "main:slack:dm:3", "c");
      await store.archive("main:slack:dm:3", "manual");
      const links = { alice: ["telegram:1", "discord:dm:2", "SLACK:DM:3"] };
      const merges = await pendingMerges(store, {}, links, agents);
      expect(merges).toHaveLength(3);
      expect(merges).toEqual(
        expect.arrayContaining([
          { from: "main:discord:dm:2", to: "main:telegram:1" },
          { from: "ops:discord:dm:2:thread:t1", to: "ops:telegram:1:thread:t1" },
          { from: "main:slack:dm:3", to: "main:telegram:1" },
        ]),
      );
      await applyMerges(store, merges);
      expect(await pendingMerges(store, {}, links, agents)).toEqual([]);
      expect(await store.generations("main:telegram:1")).toHaveLength(2);
      expect(await contents(store, (await store.getSession("ops:telegram:1:thread:t1"))!.id)).toEqual(["b"]);
    });

    it("reconcile: reports at start-up without touching anything, applies on request, then is quiet", async () => {
      await say(store, "telegram:1", "t");
      await say(store, "discord:dm:2", "d");
      const first = await reconcileIdentityLinks(store, dir, {});
      // No links and no snapshot: nothing to check, nothing written (no snapshot stands for no links).
      expect(first).toMatchObject({ hadSnapshot: false, merges: [], snapshotWritten: false });
      expect(await readLinkSnapshot(dir)).toBeUndefined();

      const report = await reconcileIdentityLinks(store, dir, alice);
      expect(report).toMatchObject({ hadSnapshot: false, snapshotWritten: false });
      expect(report.merges).toEqual([{ from: "discord:dm:2", to: "telegram:1" }]);
      expect(report.applied).toBeUndefined();
      expect(await readLinkSnapshot(dir)).toBeUndefined();
      expect(await store.getSession("discord:dm:2")).toBeDefined();

      const applied = await reconcileIdentityLinks(store, dir, alice, [], { apply: true });
      expect(applied.applied?.moved).toBe(1);
      expect(applied.snapshotWritten).toBe(true);
      expect((await readLinkSnapshot(dir))?.links).toEqual(alice);
      expect(await store.generations("telegram:1")).toHaveLength(2);

      const again = await reconcileIdentityLinks(store, dir, alice, [], { apply: true });
      expect(again).toMatchObject({ merges: [], snapshotWritten: true });
      expect(again.applied).toBeUndefined();
      expect(readFileSync(linkSnapshotPath(dir), "utf8")).toContain("discord:dm:2");
    });

    it("forget deletes every session of the person across linked accounts and leaves everyone else's", async () => {
      const agents = ["main", "ops"];
      const links = { alice: ["telegram:1", "Discord:DM:2"], bob: ["telegram:3"] };
      const hers = [
        "telegram:1",
        "discord:dm:2",
        "telegram:1:thread:7",
        "main:telegram:1",
        "ops:discord:dm:2",
        "ops:discord:dm:2:thread:x",
      ];
      const others = [
        "telegram:10",
        "telegram:12:thread:1",
        "telegram:3",
        "main:telegram:3",
        "discord:dm:22",
      ];
      for (const key of [...hers, ...others]) await say(store, key, `hello from ${key}`);
      await store.reset("telegram:1", "manual");
      await say(store, "telegram:1", "second generation");

      const result = await forgetIdentity(store, "alice", links, agents);
      expect(result.person).toBe("alice");
      expect(result.keys.map((k) => k.key)).toEqual([...hers].sort());
      expect(result.sessions).toBe(hers.length + 1);
      expect(result.entries).toBeGreaterThanOrEqual(hers.length + 2);
      for (const key of hers) expect(await store.generations(key)).toEqual([]);
      for (const key of others) expect(await store.getSession(key)).toBeDefined();
      expect((await storedKeys(store)).sort()).toEqual([...others].sort());

      const byAccount = await forgetIdentity(store, "TELEGRAM:3", links, agents);
      expect(byAccount.person).toBe("bob");
      expect(byAccount.keys.map((k) => k.key)).toEqual(["main:telegram:3", "telegram:3"]);

      const nothingLeft = await forgetIdentity(store, "alice", links, agents);
      expect(nothingLeft).toMatchObject({ keys: [], sessions: 0, entries: 0 });
    });

    it("forget refuses an identity that is not in the links", async () => {
      await say(store, "telegram:5", "x");
      const e = await rejection(forgetIdentity(store, "telegram:5", alice));
      expect(e.code).toBe("INVALID_ARGUMENT");
      expect(e.message).toMatch(/people: alice/);
      expect(e.message).toMatch(/sessions delete/);
      expect(await store.getSession("telegram:5")).toBeDefined();
    });
  });
}
