import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import type { Envelope } from "../../src/model/envelope.js";
import { telegramGroup } from "../support/envelopes.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { uniqueWord } from "./byte-scan.js";

let cluster: PostgresCluster;

beforeAll(async () => {
  cluster = await startPostgres();
}, 120_000);

afterAll(async () => {
  await cluster?.remove();
});

function dm(id: string, text: string): Envelope {
  return { channel: "telegram", chat: { type: "direct", id }, sender: { id }, text };
}

/** The tables of the database whose rows, read as text, hold `word`. */
async function tablesHolding(url: string, word: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    const found: string[] = [];
    for (const { name } of tables.rows) {
      const rows = await client.query(`SELECT count(*)::int AS n FROM "${name}" t WHERE t::text LIKE $1`, [
        `%${word}%`,
      ]);
      if ((rows.rows[0] as { n: number }).n > 0) found.push(name);
    }
    return found;
  } finally {
    await client.end();
  }
}

describe("forget --subject on PostgreSQL", () => {
  it("deletes every row that holds the person's text, in every table", async () => {
    const url = await cluster.createDatabase();
    const dir = mkdtempSync(join(tmpdir(), "sessiond-erasure-pg-"));
    const e = await createEngine({
      dataDir: dir,
      store: { backend: "postgres", url },
      lifecycle: { sweepIntervalMs: 0 },
      routing: { identityLinks: { alice: ["telegram:42"] } },
    });
    try {
      const theirs = uniqueWord("alice");
      const kept = uniqueWord("bob");
      await e.turn(dm("42", `my secret is ${theirs}`));
      await e.turn(dm("42", `again ${theirs}`));
      await e.turn(dm("99", `bob says ${kept}`));
      // And in a group: their message, and the echo that answered it.
      await e.turn(telegramGroup("-7", "42", `in the group ${theirs}`, "p1"));
      await e.turn(telegramGroup("-7", "99", `bob in the group ${kept}`, "p2"));
      await e.idle("telegram:42");
      await e.idle("telegram:-7");
      await e.shares.create("telegram:42");
      await e.agents.store.save({
        agent: "main",
        key: "telegram:42",
        runtime: "codex",
        id: "thread-1",
        data: { note: theirs },
        savedAt: Date.now(),
      });
      expect((await tablesHolding(url, theirs)).length).toBeGreaterThan(0);
      const receipt = await e.forget({ subject: "alice" });
      expect(receipt.sessions).toBe(1);
      expect(receipt.inboxRows).toBe(3);
      expect(receipt.groups).toMatchObject({ sessions: 1, messages: 2 });
      expect(receipt.scrub).toContain("VACUUM");
      expect(await tablesHolding(url, theirs)).toEqual([]);
      expect(await tablesHolding(url, kept)).toContain("entries");
      expect(await tablesHolding(url, kept)).toContain("inbox");
      const group = await e.history("telegram:-7");
      expect(group.slice(0, 2)).toMatchObject([
        { seq: 1, type: "note", code: "ERASED" },
        { seq: 2, type: "note", code: "ERASED" },
      ]);
      expect(JSON.stringify(group)).toContain(kept);
    } finally {
      await e.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
