import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/index.js";
import { webChatOn } from "../support/envelopes.js";
import { HeldRuntime } from "../support/held-runtime.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";

let cluster: PostgresCluster;
const dirs: string[] = [];
const engines: Engine[] = [];
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(async () => {
  for (const engine of engines) await engine.close();
  await cluster?.remove();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function gateway(url: string, held?: HeldRuntime): Promise<Engine> {
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-pg-branches-"));
  dirs.push(dataDir);
  const engine = await createEngine(
    {
      dataDir,
      store: { backend: "postgres", url },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
      queue: { debounceMs: 0 },
    },
    held ? { runtimes: new Map([["main", held.runtime]]) } : {},
  );
  engines.push(engine);
  return engine;
}

describe("fork and rewind on PostgreSQL, two gateways", () => {
  it("forks from the last completed entry while another gateway's turn runs, and rewinds with its compare-and-swap", async () => {
    const url = await cluster.createDatabase();
    const held = new HeldRuntime();
    const a = await gateway(url, held);
    const b = await gateway(url);
    const first = a.turn(webChatOn("admin-pg", "first"));
    await held.started(1);
    held.runs[0]!.release();
    await first;
    const second = a.turn(webChatOn("admin-pg", "second"));
    await held.started(2);
    const fork = await b.fork("admin-pg", { toKey: "admin-pg-fork" });
    expect(fork.forkedFrom.seq).toBe(2);
    held.runs[1]!.release();
    await second;
    const forked = await a.history("admin-pg-fork");
    expect(forked.map((e) => (e.type === "message" ? e.content : e.type))).toEqual([
      "first",
      "partial:first done",
    ]);
    const head = (await a.sessions.get("admin-pg"))!.entryCount;
    await expect(b.rewind("admin-pg", { toSeq: 3, expectHead: head - 1 })).rejects.toMatchObject({
      code: "SESSION_CHANGED",
    });
    const rewound = await b.rewind("admin-pg", { toSeq: 3, expectHead: head });
    expect((await a.context("admin-pg"))!.session.id).toBe(rewound.current.id);
    expect((await a.branches("admin-pg")).map((branch) => branch.kind)).toEqual([
      "current",
      "rewound",
      "fork",
    ]);
  });
});
