import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importSessions } from "../../src/import/importer.js";
import { readSource } from "../../src/import/read-source.js";
import { defaultRoutingConfig } from "../../src/keys/config.js";
import { importTwice, shape, unpadded, useImportDir } from "./helpers.js";

const t = useImportDir();
// The compaction and the title lines were written (08:31) after the messages' own times (up to 04:40):
// they come in at their time, the compaction still keeping from its firstKeptEntryId.
const lisbon = [
  "user:weather in Lisbon?",
  "assistant:Checking. [weather#call_w1]",
  "tool(call_w1):21C, clear. token=[redacted]",
  "assistant:It is 21C and clear.",
  "user:thanks",
  "assistant:You're welcome.",
  "compaction:User asked about the weather in Lisbon: 21C.",
  "title:Trip to Lisbon",
];

describe("import --from openclaw", () => {
  it("2026.7: transcripts message by message on the active branch, reset archive as the earlier generation", async () => {
    const src = t.fixture("openclaw-2026.7");
    const report = await importTwice(t.store(), "openclaw", src);
    const sessions = join(src, "agents", "main", "sessions");
    expect(report.problems).toEqual([
      { file: join(sessions, "b3f1c2d4-live.jsonl"), line: 7, reason: "not JSON" },
      {
        file: join(sessions, "sessions.json"),
        reason: 'entry "agent:main:telegram:direct:666" has no valid sessionId',
      },
    ]);
    expect(report.summary).toEqual({
      sessions: 5,
      entries: 17,
      messages: 14,
      toolCalls: 1,
      toolResults: 1,
      summaries: 1,
      titles: 2,
      problems: 2,
    });
    const gens = await t.store().generations("telegram:12345");
    expect(gens.map((g) => [g.generation, g.state, g.title, g.channel, g.chatType])).toEqual([
      [2, "active", "Trip to Lisbon", "telegram", "direct"],
      [1, "archived", "", "telegram", "direct"],
    ]);
    expect(shape(await t.store().readEntries(gens[1]!.id))).toEqual([
      "user:hello",
      "assistant:hi Ann",
      "reset",
    ]);
    const entries = await t.store().readEntries(gens[0]!.id);
    // The abandoned draft is on another branch and stays out; the bad line is reported, not fatal.
    expect(shape(entries)).toEqual(lisbon);
    expect(entries[0]!.ts).toBe(1796099614000); // the message's own timestamp, not the write time
    expect(entries[1]).toMatchObject({
      parts: [{ kind: "thinking", text: "Need the weather tool." }],
      // Credential keys dropped as for any append.
      toolCalls: [{ id: "call_w1", name: "weather", arguments: { city: "Lisbon" } }],
    });
    expect(entries[2]).toMatchObject({
      role: "tool",
      toolCallId: "call_w1",
      parts: [{ kind: "tool", name: "weather" }],
    });
    expect(entries[6]).toMatchObject({ fromSeq: 1, throughSeq: 3, firstKeptSeq: 4, tokensBefore: 1234 });
    const times = entries.map((e) => e.ts);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const context = (await t.store().loadContext("telegram:12345"))!;
    expect(context.summary?.summary).toBe("User asked about the weather in Lisbon: 21C.");
    expect(shape(context.entries)).toEqual([...lisbon.slice(3, 6), lisbon[7]]);
    expect(JSON.stringify(entries)).not.toMatch(/hunter2|ghp_/);

    expect(shape(await t.store().readEntries((await t.store().getSession("discord:c42"))!.id))).toEqual([
      "user:deploy?",
      "assistant:deployed",
    ]);
    expect((await t.store().getSession("main:main"))!.messageCount).toBe(2);
    // Another agent: its id in front, its account dropped, Discord DMs as sessiond keys them.
    const work = (await t.store().getSession("work:discord:dm:u777"))!;
    expect(work).toMatchObject({ agent: "work", channel: "discord", title: "Release checklist" });
  });

  it("2026.7: a re-import after a reset adds the new generation instead of refusing the key", async () => {
    const src = t.fixture("openclaw-2026.7");
    const sessions = join(src, "agents", "main", "sessions");
    // Before the reset: only the first transcript, live under its key.
    const store = JSON.parse(readFileSync(join(sessions, "sessions.json"), "utf8")) as Record<
      string,
      { sessionId: string; sessionFile?: string }
    >;
    const live = { ...store };
    live["agent:main:telegram:direct:12345"] = { sessionId: "a0a0-before" };
    renameSync(
      join(sessions, "a0a0-before.jsonl.reset.2026-12-01T08-30-00.000Z"),
      join(sessions, "a0a0-before.jsonl"),
    );
    renameSync(join(sessions, "b3f1c2d4-live.jsonl"), join(sessions, "later.tmp"));
    writeFileSync(join(sessions, "sessions.json"), JSON.stringify(live));
    const first = await importSessions(t.store(), "openclaw", readSource("openclaw", src));
    expect(first.imported.sessions).toBe(4);
    // The reset, as OpenClaw does it: the transcript renamed to an archive, the key given a new session.
    renameSync(
      join(sessions, "a0a0-before.jsonl"),
      join(sessions, "a0a0-before.jsonl.reset.2026-12-01T08-30-00.000Z"),
    );
    renameSync(join(sessions, "later.tmp"), join(sessions, "b3f1c2d4-live.jsonl"));
    writeFileSync(join(sessions, "sessions.json"), JSON.stringify(store));
    const second = await importSessions(t.store(), "openclaw", readSource("openclaw", src));
    expect(second.problems.filter((p) => p.reason.includes("already has"))).toEqual([]);
    expect(second.imported.sessions).toBe(2); // the old generation closed, the new one added
    const gens = await t.store().generations("telegram:12345");
    expect(gens.map((g) => [g.generation, g.state, g.messageCount])).toEqual([
      [2, "active", 6],
      [1, "archived", 2],
    ]);
  });

  it("2026.7: a reset archive no later transcript follows keeps a key of its own", async () => {
    const src = t.fixture("openclaw-2026.7");
    const sessions = join(src, "agents", "main", "sessions");
    const store = JSON.parse(readFileSync(join(sessions, "sessions.json"), "utf8")) as Record<
      string,
      unknown
    >;
    delete store["agent:main:telegram:direct:12345"];
    writeFileSync(join(sessions, "sessions.json"), JSON.stringify(store));
    await importSessions(t.store(), "openclaw", readSource("openclaw", src));
    expect(await t.store().getSession("telegram:12345")).toBeUndefined();
    const [archived] = await t.store().generations("openclaw:a0a0-before");
    expect(archived).toMatchObject({ state: "archived", messageCount: 2 });
  });

  it("2026.9: the agent database, zstd rows decoded, a reset window from its archive blob, a bad row reported", async () => {
    const src = t.fixture("openclaw-2026.9");
    const report = await importTwice(t.store(), "openclaw", src);
    const db = join(src, "agents", "main", "agent", "openclaw-agent.sqlite");
    expect(report.problems).toEqual([
      { file: db, row: "transcript_events g1/2", reason: "event_zstd does not decode: invalid zstd data" },
    ]);
    expect(report.summary).toMatchObject({
      sessions: 3,
      messages: 10,
      toolCalls: 1,
      toolResults: 1,
      summaries: 1,
    });
    const gens = await t.store().generations("telegram:12345");
    expect(gens.map((g) => [g.generation, g.state, g.title])).toEqual([
      [2, "active", "Trip to Lisbon"],
      [1, "archived", ""],
    ]);
    expect(shape(await t.store().readEntries(gens[1]!.id))).toEqual([
      "user:hello",
      "assistant:hi Ann",
      "reset",
    ]);
    const entries = await t.store().readEntries(gens[0]!.id);
    expect(unpadded(entries)).toEqual(lisbon);
    // The two compressed rows came in whole.
    expect(entries[1]!.type === "message" && entries[1]!.content.length).toBeGreaterThan(1024);
    const thread = (await t.store().loadContext("telegram:-100777:thread:99"))!;
    expect(thread.session).toMatchObject({ chatType: "group", channel: "telegram" });
    expect(shape(thread.entries)).toEqual(["user:standup at 10?", "assistant:yes, 10:00"]);
  });

  it("routes with the store's own routing: per-account DMs keep the account, shared main stays main", async () => {
    const src = t.fixture("openclaw-2026.7");
    await importSessions(t.store(), "openclaw", readSource("openclaw", src), {
      routing: defaultRoutingConfig({ agents: ["main", "work"], dmScope: "per-channel-account-peer" }),
    });
    expect(await t.store().getSession("work:discord:bota:dm:u777")).toBeDefined();
    expect(await t.store().getSession("main:telegram:default:12345")).toBeDefined();
    expect(await t.store().getSession("main:main")).toBeDefined();
  });
});
