import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import type { StoreDriver, WriteGroup } from "../../src/store/driver.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { LogStore } from "../../src/store/log-store.js";
import { MemoryDriver } from "../../src/store/memory/memory-driver.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { dm } from "./recovery-scenario.js";

const dirs: string[] = [];
let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The PostgreSQL server, started by the first test that needs it. */
let cluster: Promise<PostgresCluster> | undefined;
afterAll(async () => {
  await (await cluster)?.remove();
});

/** Every group the driver is given to commit, in order. */
function recordGroups(driver: StoreDriver): WriteGroup[][] {
  const batches: WriteGroup[][] = [];
  const commit = driver.commit.bind(driver);
  (driver as { commit: StoreDriver["commit"] }).commit = (groups, durable) => {
    batches.push([...groups]);
    return commit(groups, durable);
  };
  return batches;
}

const stores = {
  sqlite: () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-inbox-store-"));
    dirs.push(dir);
    const store = new SqliteStore({ path: join(dir, "sessiond.db") });
    return { store, driver: store.sqlite as StoreDriver };
  },
  jsonl: () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-inbox-store-"));
    dirs.push(dir);
    const store = new JsonlStore({ path: dir });
    return { store, driver: (store as unknown as { driver: StoreDriver }).driver };
  },
  memory: () => {
    const store = new MemoryStore();
    return { store, driver: (store as unknown as { driver: StoreDriver }).driver };
  },
  postgres: async () => {
    cluster ??= startPostgres();
    const store = await PostgresStore.open({ url: await (await cluster).createDatabase() });
    return { store, driver: (store as unknown as { driver: StoreDriver }).driver };
  },
};

type WithInbox = SqliteStore | MemoryStore | JsonlStore | PostgresStore;

describe.each(Object.entries(stores))("the inbox kept in the %s store", (_name, make) => {
  it("commits an agent turn's admission and end through the store's writer, the end with the reply", async () => {
    const { store, driver } = await make();
    const batches = recordGroups(driver);
    engine = await createEngine({ store, titles: { enabled: false }, queue: { debounceMs: 0 } });
    const result = await engine.turn(dm("7", "hello there"));
    await store.flush();

    const groups = batches.flat();
    const admissions = groups.flatMap((g) => (g.inbox ?? []).filter((w) => w.kind === "admit"));
    expect(admissions).toHaveLength(1);
    const id = admissions[0]!.kind === "admit" ? admissions[0]!.item.id : "";
    // The reply's group carries the end of its input, and no other group writes one.
    const withReply = groups.filter((g) =>
      g.changes.some((c) => c.kind === "appendEntries" && c.entries.some((e) => e.id === result.reply?.id)),
    );
    expect(withReply).toHaveLength(1);
    expect(withReply[0]!.inbox).toEqual([
      {
        kind: "end",
        id,
        state: "done",
        at: expect.any(Number),
        outcome: { sessionId: result.sessionId, replyId: result.reply?.id },
      },
    ]);
    // The admission commits with the input's user entry: two groups in all, each with its entries.
    const withInput = groups.filter((g) =>
      g.changes.some((c) => c.kind === "appendEntries" && c.entries.some((e) => e.id === result.input?.id)),
    );
    expect(withInput).toHaveLength(1);
    expect(withInput[0]!.inbox).toEqual([admissions[0]]);
    expect(groups.filter((g) => g.inbox)).toHaveLength(2);
    const ends = groups.flatMap((g) => (g.inbox ?? []).filter((w) => w.kind === "end"));
    expect(ends).toHaveLength(1);
    const inbox = (store as WithInbox).inbox();
    expect(await inbox.get(id)).toMatchObject({ state: "done", outcome: { replyId: result.reply?.id } });
    expect(await inbox.unfinished()).toEqual([]);
  });

  it("commits each of a client's back-to-back turns twice: input with admission, reply with end", async () => {
    const { store, driver } = await make();
    engine = await createEngine({ store, titles: { enabled: false }, queue: { debounceMs: 0 } });
    await engine.turn(dm("10", "first"));
    const batches = recordGroups(driver);
    for (const text of ["second", "third", "fourth"]) await engine.turn(dm("10", text));
    await store.flush();
    expect(batches).toHaveLength(6);
    expect(batches.map((groups) => groups.flatMap((g) => (g.inbox ?? []).map((w) => w.kind)))).toEqual([
      ["admit"],
      ["end"],
      ["admit"],
      ["end"],
      ["admit"],
      ["end"],
    ]);
  });

  it("admits an acknowledged-early input (engine.start) on its own, before its turn stores anything", async () => {
    const { store, driver } = await make();
    const batches = recordGroups(driver);
    engine = await createEngine({ store, titles: { enabled: false }, queue: { debounceMs: 0 } });
    const started = await engine.start(dm("8", "answer later"));
    const result = await started.result;
    await store.flush();
    const groups = batches.flat();
    const admitting = groups.findIndex((g) =>
      g.inbox?.some((w) => w.kind === "admit" && w.item.id === started.id),
    );
    expect(admitting).toBeGreaterThanOrEqual(0);
    expect(groups[admitting]!.changes).toEqual([]);
    const inputAt = groups.findIndex((g) =>
      g.changes.some((c) => c.kind === "appendEntries" && c.entries.some((e) => e.id === result.input?.id)),
    );
    expect(inputAt).toBeGreaterThan(admitting);
    expect(await (store as WithInbox).inbox().get(started.id)).toMatchObject({
      state: "done",
    });
  });

  it("admits every input of a turn that takes several before it runs, and ends each with the reply", async () => {
    const { store } = await make();
    engine = await createEngine({
      store,
      titles: { enabled: false },
      queue: { debounceMs: 0, mode: "collect" },
    });
    const first = engine.turn(dm("9", "one"));
    const second = engine.turn(dm("9", "two"));
    const third = engine.turn(dm("9", "three"));
    const [result] = await Promise.all([first, second, third]);
    await store.flush();
    const inbox = (store as WithInbox).inbox();
    expect(await inbox.unfinished()).toEqual([]);
    const session = await store.getSession(result.key);
    const entries = session ? await store.readEntries(session.id) : [];
    const users = entries
      .filter((e) => e.type === "message" && e.role === "user")
      .map((e) => (e as { content: string }).content);
    expect(users.sort()).toEqual(["one", "three", "two"]);
  });
});

it("refuses inbox writes on an append to a store that keeps no inbox of its own", async () => {
  const memory = new MemoryDriver();
  const withoutInbox = new Proxy(memory, {
    get: (target, name, receiver) => (name === "inbox" ? undefined : Reflect.get(target, name, receiver)),
  });
  const store = new LogStore(withoutInbox);
  try {
    await expect(
      store.append("k", [{ type: "message", role: "user", content: "x" }], {
        init: { agent: "main", channel: "test", chatType: "direct", createdBy: "test" },
        inbox: () => [],
      }),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(await store.getSession("k")).toBeUndefined();
  } finally {
    await store.close();
  }
});
