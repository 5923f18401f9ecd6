import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EngineConfig } from "../../../src/config/engine-config.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";
import { Client } from "../ws/helpers.js";
import { postJson, startTestGateway, type TestGateway, TOKEN } from "./helpers.js";

/*
 * Fork, rewind and branches end to end: a real gateway on a real socket over each store (SQLite and JSONL
 * files, a throwaway PostgreSQL cluster), the answers checked against what the history routes then read.
 */

const KEY = "telegram:42";
const PG_MS = 120_000;

interface SessionJson {
  id: string;
  key: string;
  state: string;
  entryCount: number;
  forkedFrom?: { key: string; sessionId: string; seq: number };
}
interface Answer {
  key: string;
  session: SessionJson;
  archived: SessionJson;
  forked_from: { key: string; session_id: string; seq: number };
  branches: Array<{ kind: string; key: string; session: SessionJson }>;
  entries: Array<{ content?: string }>;
  error: { code: string; message: string };
}

let cluster: PostgresCluster | undefined;
beforeAll(async () => {
  cluster = await startPostgres();
}, PG_MS);
afterAll(async () => {
  await cluster?.remove();
});

const STORES: ReadonlyArray<[name: string, store: (dir: string) => Promise<EngineConfig["store"]>]> = [
  ["SQLite", async (dir) => ({ backend: "sqlite", path: join(dir, "sessiond.db") })],
  ["JSONL", async (dir) => ({ backend: "jsonl", path: join(dir, "sessions") })],
  [
    "PostgreSQL",
    async () => ({ backend: "postgres", url: await (cluster as PostgresCluster).createDatabase() }),
  ],
];

describe.each(STORES)("fork, rewind and branches over REST (%s)", (_name, storeFor) => {
  let gw: TestGateway;
  let dir: string;
  let parentId: string;

  const call = async (path: string, init?: RequestInit) => {
    const res = await gw.api(path, init);
    return { status: res.status, body: (await res.json()) as unknown as Answer };
  };
  const at = (key: string, rest = "") => `/api/sessions/${encodeURIComponent(key)}${rest}`;
  const contents = async (key: string) =>
    (await call(at(key, "/history"))).body.entries.map((e) => e.content);

  const setUp = async () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-branches-"));
    gw = await startTestGateway({ store: await storeFor(dir) });
    await gw.engine.append(KEY, [
      { type: "message", role: "user", content: "u1" },
      { type: "message", role: "assistant", content: "a1" },
      { type: "message", role: "user", content: "u2" },
      { type: "message", role: "assistant", content: "a2" },
    ]);
    parentId = (await gw.engine.sessions.get(KEY))?.id ?? "";
  };
  afterEach(async () => {
    await gw?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "forks at an entry: 201 with the new key and its lineage, its history the parent's prefix, the parent unchanged",
    async () => {
      await setUp();
      const forked = await call(at(KEY, "/fork"), postJson({ at_seq: 2, to_key: `${KEY}/try` }));
      expect(forked.status, JSON.stringify(forked.body)).toBe(201);
      expect(forked.body.key).toBe(`${KEY}/try`);
      expect(forked.body.forked_from).toEqual({ key: KEY, session_id: parentId, seq: 2 });
      const shown = await call(at(`${KEY}/try`));
      expect(shown.body.session).toEqual(forked.body.session);
      expect(shown.body.session.forkedFrom).toEqual({ key: KEY, sessionId: parentId, seq: 2 });
      expect(await contents(`${KEY}/try`)).toEqual(["u1", "a1"]);
      expect(await contents(KEY)).toEqual(["u1", "a1", "u2", "a2"]);

      // The fork goes on by itself; the parent does not see it.
      await gw.engine.append(`${KEY}/try`, [{ type: "message", role: "user", content: "f3" }]);
      expect(await contents(`${KEY}/try`)).toEqual(["u1", "a1", "f3"]);
      expect(await contents(KEY)).toEqual(["u1", "a1", "u2", "a2"]);

      // No body: at the newest entry, on the default key.
      const whole = await call(at(KEY, "/fork"), { method: "POST" });
      expect(whole.status).toBe(201);
      // Not a platform's key: a web chat key the dashboard's chat can go on in.
      expect(whole.body.key).toMatch(/^admin-fork-\w+$/);
      expect(whole.body.forked_from.seq).toBe(4);
      expect(await contents(whole.body.key)).toEqual(["u1", "a1", "u2", "a2"]);

      // Past the newest entry: the engine's 400, and no key made.
      const past = await call(at(KEY, "/fork"), postJson({ at_seq: 99, to_key: `${KEY}/past` }));
      expect([past.status, past.body.error.code]).toEqual([400, "INVALID_ARGUMENT"]);
      expect((await call(at(`${KEY}/past`))).status).toBe(404);

      const taken = await call(at(KEY, "/fork"), postJson({ to_key: `${KEY}/try` }));
      expect([taken.status, taken.body.error.code]).toEqual([409, "KEY_TAKEN"]);
      expect(await contents(`${KEY}/try`)).toEqual(["u1", "a1", "f3"]);
    },
    PG_MS,
  );

  it(
    "rewinds with a compare-and-swap on the head; what came after stays a branch",
    async () => {
      await setUp();
      const stale = await call(at(KEY, "/rewind"), postJson({ to_seq: 3, expect_head: 3 }));
      expect([stale.status, stale.body.error.code]).toEqual([409, "SESSION_CHANGED"]);
      expect(await contents(KEY)).toEqual(["u1", "a1", "u2", "a2"]);

      const rewound = await call(at(KEY, "/rewind"), postJson({ to_seq: 3, expect_head: 4 }));
      expect(rewound.status, JSON.stringify(rewound.body)).toBe(200);
      expect(rewound.body.forked_from).toEqual({ key: KEY, session_id: parentId, seq: 2 });
      expect(rewound.body.archived).toMatchObject({ id: parentId, state: "archived" });
      expect(rewound.body.session).toMatchObject({ key: KEY, state: "active" });
      expect(await contents(KEY)).toEqual(["u1", "a1"]);
      await gw.engine.append(KEY, [{ type: "message", role: "user", content: "u2'" }]);
      expect(await contents(KEY)).toEqual(["u1", "a1", "u2'"]);

      const fork = await call(at(KEY, "/fork"), postJson({ to_key: "telegram:other" }));
      expect(fork.status).toBe(201);
      const tree = await call(at(KEY, "/branches"));
      expect(tree.status).toBe(200);
      const kinds = tree.body.branches.map((b) => [b.kind, b.key, b.session.id]);
      expect(kinds).toEqual(
        expect.arrayContaining([
          ["current", KEY, rewound.body.session.id],
          ["rewound", KEY, parentId],
          ["fork", "telegram:other", fork.body.session.id],
        ]),
      );
      expect(kinds).toHaveLength(3);
      // The rewound branch is still readable in full, among the key's generations.
      const all = await call(at(KEY, "/history?all=true"));
      expect(all.body.entries.map((e) => e.content)).toEqual(expect.arrayContaining(["u2", "a2", "u2'"]));
    },
    PG_MS,
  );

  it(
    "does the same over the WebSocket, with the REST names",
    async () => {
      await setUp();
      const ws = await Client.open(`${gw.url.replace("http", "ws")}/ws?token=${TOKEN}`);
      try {
        const forked = await ws.call("sessions.fork", { session: KEY, at_seq: 1, to_key: "telegram:ws" });
        expect(forked).toMatchObject({
          key: "telegram:ws",
          forked_from: { key: KEY, session_id: parentId, seq: 1 },
        });
        const rewound = await ws.call("sessions.rewind", { session: KEY, to_seq: 2, expect_head: 4 });
        expect(rewound).toMatchObject({ forked_from: { seq: 1 }, archived: { id: parentId } });
        const stale = await ws.request("sessions.rewind", { session: KEY, to_seq: 2, expect_head: 4 });
        expect(stale).toMatchObject({ ok: false, error: { code: "SESSION_CHANGED" } });
        const tree = (await ws.call("sessions.branches", { session: KEY })) as unknown as Answer;
        expect(tree.branches.map((b) => b.kind).sort()).toEqual(["current", "fork", "rewound"]);
      } finally {
        await ws.close();
      }
    },
    PG_MS,
  );
});
