import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { telegramGroup } from "../support/envelopes.js";

let dir: string | undefined;
let engine: Engine | undefined;

afterEach(async () => {
  await engine?.close();
  engine = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("forget --subject on an encrypted store rewrites their group messages sealed and finds their sealed inbox rows", async () => {
  dir = mkdtempSync(join(tmpdir(), "sessiond-erasure-sealed-"));
  const store = new SqliteStore({ path: join(dir, "sessions.db"), encryption: { key: randomBytes(32) } });
  engine = await createEngine({
    dataDir: dir,
    store,
    lifecycle: { sweepIntervalMs: 0 },
    routing: { identityLinks: { alice: ["telegram:42"] } },
  });
  await engine.turn(telegramGroup("-5", "42", "alice in the group", "s1"));
  await engine.turn(telegramGroup("-5", "99", "bob in the group", "s2"));
  await engine.idle("telegram:-5");
  const receipt = await engine.forget({ subject: "alice" });
  expect(receipt.groups).toMatchObject({ sessions: 1, messages: 2 });
  // Their group message's inbox row: its envelope is sealed, its channel and sender id are not.
  expect(receipt.inboxRows).toBe(1);
  const history = await engine.history("telegram:-5");
  expect(history.slice(0, 2)).toMatchObject([
    { type: "note", code: "ERASED" },
    { type: "note", code: "ERASED" },
  ]);
  expect(JSON.stringify(history)).toContain("bob in the group");
  expect(JSON.stringify(history)).not.toContain("alice in the group");
});
