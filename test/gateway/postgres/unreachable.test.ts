import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";
import { serveGateway } from "../../support/serve-child.js";

const TOKEN = "pg-unreachable-token";

describe("sessiond serve configured for PostgreSQL that cannot be reached", () => {
  let cluster: PostgresCluster;
  beforeAll(async () => {
    cluster = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
  });

  it("never falls back to memory: it does not listen, says why, and serves on PostgreSQL once it answers", async (context) => {
    if (!cluster.restartable) context.skip();
    const databaseUrl = await cluster.createDatabase();
    await cluster.stop("fast");
    const dir = mkdtempSync(join(tmpdir(), "sessiond-pg-down-"));
    writeFileSync(
      join(dir, "sessiond.yaml"),
      `store: { backend: postgres, url: "${databaseUrl}" }\ntitles: { enabled: false }\n`,
    );
    const served = serveGateway(dir, TOKEN);
    try {
      // Two tries, each one line, and no listening in between: a load balancer sends it nothing.
      await new Promise<void>((resolve, reject) => {
        const check = () => {
          const lines = served.output.text.match(/warning: the postgres store cannot be reached/g) ?? [];
          if (lines.length >= 2) resolve();
        };
        served.child.stderr?.on("data", check);
        served.child.once("exit", (code) => reject(new Error(`exited ${code}: ${served.output.text}`)));
      });
      expect(served.output.text).not.toContain("listening on");
      expect(served.output.text).not.toContain("in-memory");
      expect(served.output.text).toMatch(/not listening until it can, retrying in 2 s/);
      await cluster.start();
      const url = await served.listening();
      expect(served.output.text).toContain("store: postgres");
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: "ok", store: "postgres" });
    } finally {
      served.kill();
      if (cluster.restartable) await cluster.start().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
