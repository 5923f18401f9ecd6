import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineConfig } from "../../src/config/engine-config.js";
import { createEngine, type Engine } from "../../src/engine.js";
import type { Envelope } from "../../src/model/envelope.js";
import { searchStore } from "../../src/search/searchable.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { useTempDirs } from "../support/temp-dirs.js";
import { fileCount, filesHolding, tablesHolding, uniqueMarker } from "./scan.js";

const tempDir = useTempDirs();

function dm(peer: string, text: string): Envelope {
  return { channel: "telegram", chat: { type: "direct", id: peer }, sender: { id: peer }, text };
}

type Backend = "sqlite" | "jsonl" | "postgres";

let cluster: PostgresCluster | undefined;
beforeAll(async () => {
  cluster = await startPostgres();
}, 60_000);
afterAll(() => cluster?.remove());

async function storeFor(
  backend: Backend,
  dir: string,
): Promise<{ store: EngineConfig["store"]; url?: string }> {
  if (backend === "sqlite") return { store: { backend, path: join(dir, "sessiond.db") } };
  if (backend === "jsonl") return { store: { backend, path: join(dir, "sessions") } };
  const url = await (cluster as PostgresCluster).createDatabase();
  return { store: { backend, url }, url };
}

/** Where the marker may have gone: every file of the data dir, and on PostgreSQL every table's rows. */
async function holders(dir: string, marker: string, url: string | undefined): Promise<string[]> {
  return [...filesHolding(dir, marker), ...(url ? await tablesHolding(url, marker) : [])];
}

describe.each<Backend>(["sqlite", "jsonl", "postgres"])("incognito sessions on %s", (backend) => {
  it("keep a turn's text in memory only, out of search, and are gone after a restart", async () => {
    const dir = tempDir("sessiond-incognito-");
    const { store, url } = await storeFor(backend, dir);
    const stored = uniqueMarker();
    const secret = uniqueMarker();
    let engine: Engine = await createEngine({ dataDir: dir, store });
    await engine.turn(dm("100", `remember ${stored}`));
    const first = await engine.turn(dm("200", `whisper ${secret}`), { incognito: true });
    expect(engine.isIncognito(first.key)).toBe(true);
    expect(engine.isIncognito("telegram:100")).toBe(false);
    // A later turn of the key is incognito without asking; so is one answered asynchronously (no inbox row).
    await engine.turn(dm("200", `again ${secret}`));
    const started = await engine.start(dm("200", `later ${secret}`), { incognito: true });
    await started.result;
    await engine.idle(first.key);

    const history = await engine.history(first.key);
    expect(history.filter((e) => e.type === "message")).toHaveLength(6);
    expect(JSON.stringify(history)).toContain(secret);
    const listed = (await engine.sessions.list({ limit: 10 })).sessions.map((s) => s.key).sort();
    expect(listed).toEqual(["telegram:100", "telegram:200"]);
    expect((await engine.sessions.get(first.key))?.title).not.toBe("");
    const found = await searchStore(engine.store, { text: stored }).catch(() => undefined);
    if (found) {
      expect(found.hits.length).toBeGreaterThan(0);
      expect((await searchStore(engine.store, { text: secret })).hits).toEqual([]);
    }

    await engine.store.sync();
    // The scan reads the store's files: the stored session's text is found there, the incognito one's nowhere.
    expect(await holders(dir, stored, url)).not.toEqual([]);
    expect(await holders(dir, secret, url)).toEqual([]);
    await engine.close();
    if (!url) expect(fileCount(dir)).toBeGreaterThan(0);
    expect(await holders(dir, secret, url)).toEqual([]);

    engine = await createEngine({ dataDir: dir, store });
    try {
      expect(engine.isIncognito(first.key)).toBe(false);
      expect(await engine.sessions.get(first.key)).toBeUndefined();
      await expect(engine.history(first.key)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
      expect((await engine.sessions.get("telegram:100"))?.messageCount).toBe(2);
    } finally {
      await engine.close();
    }
  });
});

describe("incognito keys", () => {
  it("refuse a key that has a stored session, and one that is incognito stays so until deleted", async () => {
    const dir = tempDir("sessiond-incognito-");
    const engine = await createEngine({ dataDir: dir });
    try {
      await engine.turn(dm("1", "kept"));
      await expect(engine.turn(dm("1", "hide this"), { incognito: true })).rejects.toMatchObject({
        code: "KEY_TAKEN",
      });
      expect(engine.isIncognito("telegram:1")).toBe(false);
      expect(
        (await engine.history("telegram:1")).map((e) => (e.type === "message" ? e.content : "")),
      ).not.toContain("hide this");
      await engine.turn(dm("2", "hidden"), { incognito: true });
      expect(engine.isIncognito("telegram:2")).toBe(true);
      await engine.delete("telegram:2");
      expect(engine.isIncognito("telegram:2")).toBe(false);
      await engine.turn(dm("2", "now stored"));
      expect(engine.isIncognito("telegram:2")).toBe(false);
    } finally {
      await engine.close();
    }
  });

  it("follow session.incognito_for rules: a channel, a key pattern; others are stored", async () => {
    const dir = tempDir("sessiond-incognito-");
    const secret = uniqueMarker();
    const engine = await createEngine({
      dataDir: dir,
      incognito: { for: [{ channel: "slack" }, { key: "webhook:*:private:*" }] },
    });
    try {
      const slack = await engine.turn({ ...dm("U1", `slack ${secret}`), channel: "slack" });
      expect(engine.isIncognito(slack.key)).toBe(true);
      expect(engine.isIncognito("webhook:main:private:x")).toBe(true);
      expect(engine.isIncognito("webhook:main:public:x")).toBe(false);
      const stored = await engine.turn(dm("5", "telegram is stored"));
      expect(engine.isIncognito(stored.key)).toBe(false);
      await engine.idle(slack.key);
      await engine.store.sync();
      expect(filesHolding(dir, "telegram is stored")).not.toEqual([]);
      expect(filesHolding(dir, secret)).toEqual([]);
    } finally {
      await engine.close();
    }
  });

  it("a rule that matches a key with a stored session refuses its turns, naming the rule", async () => {
    const dir = tempDir("sessiond-incognito-");
    const slack = { ...dm("U9", "stored before the rule"), channel: "slack" };
    let engine = await createEngine({ dataDir: dir });
    await engine.turn(slack);
    await engine.close();
    engine = await createEngine({ dataDir: dir, incognito: { for: [{ channel: "slack" }] } });
    try {
      const refused = engine.turn({ ...slack, text: "after the rule" });
      await expect(refused).rejects.toMatchObject({ code: "KEY_TAKEN" });
      await expect(refused).rejects.toThrow(/session\.incognito_for/);
    } finally {
      await engine.close();
    }
    expect(filesHolding(dir, "after the rule")).toEqual([]);
  });

  it("are bounded: past the most keys or bytes, INCOGNITO_FULL, and what is held stays", async () => {
    const engine = await createEngine({
      dataDir: tempDir("sessiond-incognito-"),
      incognito: { maxKeys: 1, maxBytes: 4096 },
    });
    try {
      await engine.turn(dm("1", "one"), { incognito: true });
      await expect(engine.turn(dm("2", "two"), { incognito: true })).rejects.toMatchObject({
        code: "INCOGNITO_FULL",
      });
      await expect(engine.turn(dm("1", "x".repeat(5000)))).rejects.toMatchObject({ code: "INCOGNITO_FULL" });
      expect((await engine.history("telegram:1")).filter((e) => e.type === "message")).toHaveLength(2);
      await engine.delete("telegram:1");
      await engine.turn(dm("2", "two"), { incognito: true });
      expect(engine.isIncognito("telegram:2")).toBe(true);
    } finally {
      await engine.close();
    }
  });
});
