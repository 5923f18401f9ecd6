import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemorySeenMessages } from "../../src/channels/seen/memory-seen.js";
import { SEEN_RETENTION_MS, type SeenMessages } from "../../src/channels/seen/seen.js";
import { SEEN_FILE, SqliteSeenMessages } from "../../src/channels/seen/sqlite-seen.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function sqlite(dir = mkdtempSync(join(tmpdir(), "sessiond-seen-"))): [SqliteSeenMessages, string] {
  dirs.push(dir);
  return [new SqliteSeenMessages(dir, join(dir, SEEN_FILE)), dir];
}

describe.each([
  ["sqlite", () => sqlite()[0] as SeenMessages],
  ["memory", () => new MemorySeenMessages() as SeenMessages],
])("seen messages (%s)", (_name, open) => {
  it("takes an id once within the retention, again after it or once forgotten", async () => {
    const seen = open();
    const t = 1_800_000_000_000;
    expect(await seen.claim("whatsapp:PN1:49:wamid.1", t)).toBe(true);
    expect(await seen.claim("whatsapp:PN1:49:wamid.1", t + 6 * 24 * 3600_000)).toBe(false);
    await seen.forget("whatsapp:PN1:49:wamid.1");
    expect(await seen.claim("whatsapp:PN1:49:wamid.1", t + 1)).toBe(true);
    // A week and a bit later it has expired (the next claim prunes it first).
    expect(await seen.claim("whatsapp:PN1:49:wamid.1", t + SEEN_RETENTION_MS + 2 * 3600_000)).toBe(true);
    await seen.close();
  });
});

describe("seen messages in SQLite", () => {
  it("outlive the process's handle: a reopened file still knows the id", async () => {
    const [first, dir] = sqlite();
    expect(await first.claim("slack:T1:C1:1700.1", 1000)).toBe(true);
    await first.close();
    const [again] = sqlite(dir);
    expect(await again.claim("slack:T1:C1:1700.1", 2000)).toBe(false);
    await again.close();
  });
});
