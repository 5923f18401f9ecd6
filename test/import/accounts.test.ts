import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importSessions } from "../../src/import/importer.js";
import { readSource } from "../../src/import/read-source.js";
import type { ImportSource } from "../../src/import/types.js";
import { defaultRoutingConfig } from "../../src/keys/config.js";
import { routeEnvelope } from "../../src/keys/route.js";
import { cli, useTempDir } from "../cli/helpers.js";
import { gunzipAll, useImportDir } from "./helpers.js";

// Under dm_scope per-channel-account-peer the bot account is in a direct chat's key. sessiond's Telegram
// channel names the bot by its id (the digits before the token's colon); OpenClaw names it as its config
// does (`default`), ZeroClaw not at all. The report says so, and --account-map gives the chats that id.
const t = useImportDir();
const tempDir = useTempDir();
const BOT_ID = "123456789";
const routing = defaultRoutingConfig({ agents: ["main", "work"], dmScope: "per-channel-account-peer" });
// A direct message from Telegram user 12345 as sessiond's Telegram channel hands it to the router.
const fromTelegram = {
  channel: "telegram",
  account: BOT_ID,
  chat: { type: "direct" as const, id: "12345" },
  sender: { id: "12345" },
  text: "next",
};

const CASES: Array<[ImportSource, string, string]> = [
  ["openclaw", "openclaw-real-2026.9", "thanks"],
  ["zeroclaw", "zeroclaw", "remind me at 5"],
];

describe("import: the peer's bot accounts and sessiond's", () => {
  it.each(CASES)(
    "%s: the note names --account-map; with it the next Telegram message lands",
    async (source, fixture, last) => {
      const src = t.fixture(fixture);
      gunzipAll(src);
      const { key } = routeEnvelope(fromTelegram, routing);
      const dry = await importSessions(t.store(), source, readSource(source, src), { routing, dryRun: true });
      const notes = dry.assumptions.map((a) => a.assumed);
      expect(notes).toContain(
        "account default is the peer's name for its telegram bot; sessiond's telegram channel names the bot by the bot's id, the number before the colon in its token: import with --account-map telegram:default=<that id> so that new messages reach this chat",
      );
      const accountMap = { "telegram:default": BOT_ID };
      const report = await importSessions(t.store(), source, readSource(source, src, { accountMap }), {
        routing,
      });
      expect(report.assumptions.filter((a) => a.key === key)).toEqual([]);
      const context = await t.store().loadContext(key);
      expect(context, key).toBeDefined();
      const users = context!.entries.filter((e) => e.type === "message" && e.role === "user");
      expect(users.at(-1)).toMatchObject({ content: last });
    },
  );

  it("CLI: --account-map takes <channel>:<account>=<id> pairs and refuses anything else", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "sessiond.yaml"),
      "data_dir: .\nsession: { dm_scope: per-channel-account-peer }\n",
    );
    const src = t.fixture("zeroclaw");
    const good = await cli(dir, [
      "import",
      "--from",
      "zeroclaw",
      src,
      "--account-map",
      `telegram:default=${BOT_ID}`,
    ]);
    expect(good.code).toBe(0);
    const listed = await cli(dir, ["sessions", "list", "--json"]);
    expect(listed.stdout).toContain(`"telegram:${BOT_ID}:12345"`);
    const misspelt = await cli(dir, [
      "import",
      "--from",
      "zeroclaw",
      src,
      "--dry-run",
      "--account-map",
      "telegram:defualt=1",
    ]);
    expect(misspelt.code).toBe(0);
    expect(misspelt.stderr).toContain(
      `warning: ${src}: --account-map telegram:defualt: no chat of the peer came through that account\n`,
    );
    const bad = await cli(dir, ["import", "--from", "zeroclaw", src, "--account-map", "default=1"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--account-map wants <channel>:<peer account>=<sessiond account> pairs");
  });
});
