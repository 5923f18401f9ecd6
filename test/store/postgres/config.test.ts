import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { createEngine } from "../../../src/engine.js";
import { openStore } from "../../../src/store/open.js";
import { SCHEMA_VERSION } from "../../../src/store/postgres/schema.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";

let cluster: PostgresCluster;
let dir: string;
beforeAll(async () => {
  cluster = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "sessiond-pg-config-"));
});
afterAll(async () => {
  await cluster?.remove();
  rmSync(dir, { recursive: true, force: true });
});

describe("store: { backend: postgres, url }", () => {
  it("is read from sessiond.yaml and from SESSIOND_STORE / SESSIOND_DATABASE_URL, and runs a turn", async () => {
    const url = await cluster.createDatabase();
    writeFileSync(
      join(dir, "sessiond.yaml"),
      `store:\n  backend: postgres\n  url: "${url}"\n  lease_ttl_ms: 5000\n`,
    );
    expect(loadConfig({ cwd: dir, env: {} }).config.store).toEqual({
      backend: "postgres",
      url,
      leaseTtlMs: 5000,
    });
    const fromEnv = loadConfig({
      cwd: tmpdir(),
      env: { SESSIOND_STORE: "postgres", SESSIOND_DATABASE_URL: url, SESSIOND_DURABILITY: "relaxed" },
    }).config.store;
    expect(fromEnv).toEqual({ backend: "postgres", url, durability: "relaxed" });
    const engine = await createEngine(loadConfig({ cwd: dir, env: {} }).config);
    expect(engine.store.backend).toBe("postgres");
    const result = await engine.turnWith(
      { channel: "telegram", chat: { type: "direct", id: "42" }, sender: { id: "42" }, text: "hello" },
      async (context) => `you said: ${context.input.content}`,
    );
    expect(result.reply?.content).toBe("you said: hello");
    expect((await engine.history("telegram:42")).map((e) => e.type)).toContain("message");
    await engine.close();
  });

  it("needs a URL: without one the config is refused, naming where to put it", () => {
    expect(() => loadConfig({ cwd: tmpdir(), env: { SESSIOND_STORE: "postgres" } })).toThrow(
      /SESSIOND_DATABASE_URL/,
    );
  });

  it("migrates once when three stores open together, and refuses a database with a newer schema", async () => {
    const url = await cluster.createDatabase();
    const stores = await Promise.all([1, 2, 3].map(() => openStore({ backend: "postgres", url })));
    await Promise.all(stores.map((s) => s.close()));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const applied = await client.query<{ version: number }>(
      "SELECT version FROM sessiond_schema ORDER BY version",
    );
    expect(applied.rows.map((r) => r.version)).toEqual(
      Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
    );
    await client.query("INSERT INTO sessiond_schema (version) VALUES ($1)", [SCHEMA_VERSION + 1]);
    await client.end();
    await expect(openStore({ backend: "postgres", url })).rejects.toMatchObject({
      code: "STORE_SCHEMA_NEWER",
      message: expect.stringMatching(/newer than this sessiond knows/),
    });
  });

  it("is STORE_UNAVAILABLE, naming no password, when the server cannot be reached", async () => {
    const url = "postgresql://sessiond:hunter2secret@/nowhere?host=/nonexistent-dir";
    const error = await openStore({ backend: "postgres", url }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(String((error as Error).message)).not.toContain("hunter2secret");
  });
});
