import { describe, expect, it } from "vitest";
import { importSessions } from "../../src/import/importer.js";
import { readSource } from "../../src/import/read-source.js";
import type { ImportSource } from "../../src/import/types.js";
import { defaultRoutingConfig } from "../../src/keys/config.js";
import { routeEnvelope } from "../../src/keys/route.js";
import type { RoutingConfig } from "../../src/keys/types.js";
import type { Envelope } from "../../src/model/envelope.js";
import { gunzipAll, useImportDir } from "./helpers.js";

// For every fixture: import with sessiond's settings that match the peer's, then route the peer's next
// message from each chat through sessiond's own router: it must land on the imported session, whose
// last user message is the chat's last one. Where the peer's data cannot say, the report says so.
const t = useImportDir();

type Next = [envelope: Omit<Envelope, "text">, lastUserMessage: string];
interface Case {
  source: ImportSource;
  fixture: string;
  routing: Partial<RoutingConfig>;
  next: Next[];
  /**
   * The keys the report has an assumption for. Under per-channel-account-peer that includes each Telegram
   * and Discord DM whose account is the peer's name for the bot, not the id sessiond's channel uses
   * (the envelopes here carry no account, so they route as `default`: test/import/accounts.test.ts).
   */
  assumed: string[];
}

const dm = (channel: string, id: string, extra: Partial<Envelope> = {}): Omit<Envelope, "text"> => ({
  channel,
  chat: { type: "direct", id },
  sender: { id },
  ...extra,
});

const OPENCLAW_ROUTING: Partial<RoutingConfig> = {
  agents: ["main", "work"],
  dmScope: "per-channel-account-peer",
  groupScope: "per-group",
};
const openclawReal: Next[] = [
  [dm("telegram", "12345"), ""],
  [{ channel: "discord", chat: { type: "channel", id: "c42" }, sender: { id: "u1" } }, "deploy?"],
  [dm("discord", "u777", { agent: "work", account: "bota" }), "ship it?"],
];

const CASES: Case[] = [
  {
    source: "openclaw",
    fixture: "openclaw-2026.7",
    routing: OPENCLAW_ROUTING,
    next: [
      [dm("telegram", "12345"), "thanks"],
      [{ channel: "discord", chat: { type: "channel", id: "c42" }, sender: { id: "u1" } }, "deploy?"],
      [dm("discord", "u777", { agent: "work", account: "bota" }), "ship it?"],
    ],
    assumed: ["main:main", "main:telegram:default:12345", "work:discord:bota:dm:u777"],
  },
  {
    // OpenClaw's default dmScope: every DM of the agent in one session.
    source: "openclaw",
    fixture: "openclaw-2026.7",
    routing: { ...OPENCLAW_ROUTING, dmScope: "main" },
    next: [[dm("whatsapp", "+351900000000"), "ping"]],
    // Under dmScope main the Telegram DM shares main:main too: the earlier of the two becomes a generation.
    assumed: ["main:main", "work:main"],
  },
  {
    source: "openclaw",
    fixture: "openclaw-2026.9",
    routing: OPENCLAW_ROUTING,
    next: [
      [dm("telegram", "12345"), "thanks"],
      [
        {
          channel: "telegram",
          chat: { type: "group", id: "-100777", threadId: "99" },
          sender: { id: "555" },
        },
        "standup at 10?",
      ],
    ],
    assumed: ["main:telegram:default:12345"],
  },
  {
    source: "openclaw",
    fixture: "openclaw-real-2026.7",
    routing: OPENCLAW_ROUTING,
    next: openclawReal.map(([e, last]) => [e, last || "new topic: Porto?"]),
    assumed: ["main:telegram:default:12345", "work:discord:bota:dm:u777"],
  },
  {
    source: "openclaw",
    fixture: "openclaw-real-2026.9",
    routing: OPENCLAW_ROUTING,
    next: openclawReal.map(([e, last]) => [e, last || "thanks"]),
    assumed: ["main:telegram:default:12345", "work:discord:bota:dm:u777"],
  },
  {
    // ZeroClaw keys per sender in a room; its channel alias is a second bot (an account).
    source: "zeroclaw",
    fixture: "zeroclaw",
    routing: { dmScope: "per-channel-account-peer" },
    next: [
      [{ ...dm("telegram", "12345"), sender: { id: "alice" } }, "remind me at 5"],
      [{ ...dm("telegram", "555"), sender: { id: "carol" } }, "old"],
      [
        {
          channel: "telegram",
          chat: { type: "group", id: "-100777", threadId: "42" },
          sender: { id: "dave" },
        },
        "thanks",
      ],
      [{ ...dm("discord", "d900"), sender: { id: "bob" }, account: "clamps" }, "status?"],
    ],
    assumed: ["discord:clamps:dm:bob", "telegram:default:12345", "telegram:default:555"],
  },
  {
    // ZeroClaw's own grouping: one session per sender in a room (and thread).
    source: "zeroclaw",
    fixture: "zeroclaw",
    routing: { scope: "zeroclaw-thread" },
    next: [
      [{ ...dm("telegram", "12345"), sender: { id: "alice" } }, "remind me at 5"],
      [
        {
          channel: "telegram",
          chat: { type: "group", id: "-100777", threadId: "42" },
          sender: { id: "dave" },
        },
        "thanks",
      ],
      [{ ...dm("discord", "d900"), sender: { id: "bob" }, account: "clamps" }, "status?"],
    ],
    assumed: ["discord:d900:-:bob"],
  },
  {
    source: "nanobot",
    fixture: "nanobot",
    routing: {},
    next: [
      [dm("telegram", "12345"), "book it"],
      [dm("slack", "C9"), "hi"],
    ],
    assumed: ["slack:C9"],
  },
  {
    source: "nanobot",
    fixture: "nanobot-flat",
    routing: {},
    next: [[dm("telegram", "42"), "weather?"]],
    assumed: [],
  },
  {
    source: "picoclaw",
    fixture: "picoclaw",
    routing: {},
    next: [
      [dm("telegram", "12345"), "book it"],
      [dm("discord", "u9"), "hi"],
    ],
    assumed: [],
  },
  {
    source: "crabtalk",
    fixture: "crabtalk",
    routing: {},
    next: [[dm("telegram", "12345"), "book the 9:00"]],
    assumed: ["crab:user"],
  },
];

describe("every imported session answers the next message from its chat", () => {
  it.each(CASES.map((c) => [`${c.fixture} (${JSON.stringify(c.routing)})`, c] as const))(
    "%s",
    async (_name, c) => {
      const src = t.fixture(c.fixture);
      gunzipAll(src);
      const routing = defaultRoutingConfig(c.routing);
      const report = await importSessions(t.store(), c.source, readSource(c.source, src), { routing });
      for (const [envelope, last] of c.next) {
        const { key } = routeEnvelope({ ...envelope, text: "next" }, routing);
        const context = await t.store().loadContext(key);
        expect(context, `${key} for ${JSON.stringify(envelope)}`).toBeDefined();
        const users = context!.entries.filter((e) => e.type === "message" && e.role === "user");
        expect(users.at(-1), key).toMatchObject({ content: last });
      }
      expect([...new Set(report.assumptions.map((a) => a.key))].sort()).toEqual(c.assumed.sort());
    },
  );

  it("the report says what it assumed where the peer's data cannot say", async () => {
    const src = t.fixture("openclaw-2026.7");
    const report = await importSessions(t.store(), "openclaw", readSource("openclaw", src));
    expect(report.assumptions.map((a) => [a.key, a.assumed]).sort()).toEqual([
      [
        "discord:c42",
        "the peer kept one session for the whole discord channel c42; sessiond's routing gives each sender their own, so new messages there go to a key per sender; set group_scope_by_channel.discord: per-group to continue this one",
      ],
      [
        "main:main",
        "the peer kept one session for all of agent main's direct chats (dmScope main); kept as main:main, where new messages go with dm_scope: main",
      ],
      [
        "work:discord:dm:u777",
        "account bota is not in sessiond's key under dm_scope per-channel-peer; set dm_scope: per-channel-account-peer to keep each account's chats apart",
      ],
    ]);
  });

  it("two accounts' DMs with one person stay two sessions when dm_scope drops the account", async () => {
    const src = t.fixture("openclaw-2026.7");
    const { readFileSync, writeFileSync, copyFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const dir = join(src, "agents", "work", "sessions");
    const index = JSON.parse(readFileSync(join(dir, "sessions.json"), "utf8")) as Record<
      string,
      { sessionId: string }
    >;
    const [, entry] = Object.entries(index)[0]!;
    copyFileSync(join(dir, `${entry.sessionId}.jsonl`), join(dir, "botb.jsonl"));
    index["agent:work:discord:botb:direct:u777"] = { ...entry, sessionId: "botb" };
    writeFileSync(join(dir, "sessions.json"), JSON.stringify(index));
    const routing = defaultRoutingConfig({ agents: ["main", "work"] });
    await importSessions(t.store(), "openclaw", readSource("openclaw", src), { routing });
    expect(await t.store().getSession("work:discord:bota:dm:u777")).toMatchObject({ state: "active" });
    expect(await t.store().getSession("work:discord:botb:dm:u777")).toMatchObject({ state: "active" });
  });
});
