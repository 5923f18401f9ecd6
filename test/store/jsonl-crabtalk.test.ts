import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Entry, EntryInput } from "../../src/model/entry.js";
import type { StoredContext } from "../../src/model/session.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import type { LineProblem } from "../../src/store/jsonl/session-file.js";
import { type CrabMessage, findLatestConversation, loadContext } from "../support/crabtalk-loader.js";

const user = (content: string): EntryInput => ({ type: "message", role: "user", content });
const assistant = (content: string, extra: Partial<EntryInput> = {}): EntryInput =>
  ({ type: "message", role: "assistant", content, ...extra }) as EntryInput;
const call = (id: string, name: string, args: Record<string, unknown>): EntryInput =>
  assistant("", { toolCalls: [{ id, name, arguments: args }] });
const result = (id: string, content: string): EntryInput => ({
  type: "message",
  role: "tool",
  content,
  toolCallId: id,
});
const thinking = (content: string, reasoning: string): EntryInput =>
  assistant(content, { parts: [{ kind: "thinking", text: reasoning }] });

/** sessiond's context as CrabTalk's messages: the summary as a user message, then the messages. */
function asCrabtalk(context: StoredContext): CrabMessage[] {
  const messages: CrabMessage[] = [];
  const blank = { content: "", reasoning_content: "", name: "", tool_call_id: "", tool_calls: [], agent: "" };
  if (context.summary) messages.push({ ...blank, role: "user", content: context.summary.summary });
  const names = new Map<string, string>();
  for (const entry of context.entries) {
    if (entry.type !== "message") continue;
    for (const c of entry.toolCalls ?? []) names.set(c.id, c.name);
    const name = entry.toolCallId === undefined ? undefined : names.get(entry.toolCallId);
    // A result whose call is before the kept part has nothing to answer in CrabTalk's context.
    if (entry.role === "tool" && name === undefined) continue;
    messages.push({
      ...blank,
      role: entry.role,
      content: entry.content,
      reasoning_content: (entry.parts ?? [])
        .filter((p) => p.kind === "thinking")
        .map((p) => p.text)
        .join("\n"),
      name: entry.role === "tool" ? (name ?? "") : "",
      tool_call_id: entry.role === "tool" ? (entry.toolCallId ?? "") : "",
      tool_calls: (entry.toolCalls ?? []).map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.arguments) },
      })),
    });
  }
  return messages;
}

describe("JSONL store beside CrabTalk (its loader, test/support/crabtalk-loader.ts)", () => {
  let dir: string;
  let problems: LineProblem[];
  const open = () => new JsonlStore({ path: dir, onProblem: (p) => problems.push(p) });
  const files = () => readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
  const metaOf = (file: string) =>
    JSON.parse(readFileSync(join(dir, file), "utf8").split("\n")[0]!) as Record<string, string>;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-crabtalk-"));
    problems = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("CrabTalk finds each key's current file and loads exactly sessiond's context", async () => {
    const store = open();
    const telegram = { agent: "main", channel: "telegram", createdBy: "42" };
    const written = new Map<string, Entry[]>();
    const append = async (key: string, entries: EntryInput[], init?: typeof telegram) => {
      const out = await store.append(key, entries, init ? { init } : {});
      written.set(out.session.id, [...(written.get(out.session.id) ?? []), ...out.entries]);
      return out;
    };
    // Tool calls with results and reasoning, a compaction keeping a call and its result (and cutting
    // another call off from its result), then a title.
    await append(
      "telegram:42",
      [
        user("find flights"),
        call("call_1", "flights", { to: "LIS" }),
        result("call_1", "3 options"),
        thinking("The 9:40 one.", "cheapest is the 9:40"),
        user("and hotels?"),
        call("call_2", "hotels", { city: "Lisbon", nights: 3 }),
        result("call_2", ""),
        assistant("None free."),
      ],
      telegram,
    );
    await append("telegram:42", [
      {
        type: "compaction",
        summary: "User booked the 9:40 flight to Lisbon.",
        fromSeq: 1,
        throughSeq: 2,
        firstKeptSeq: 3,
        tokensBefore: 100,
        tokensAfter: 10,
        summarizer: "offline",
      },
      { type: "title", title: "Lisbon trip" },
      user("thanks"),
      call("call_3", "calendar", {}),
      result("call_3", "added"),
    ]);
    // Two more keys of the same sender, one of them reset.
    await append("whatsapp:42", [user("hi from whatsapp"), thinking("hello", "greet back")], {
      ...telegram,
      channel: "whatsapp",
    });
    await append("telegram:-100555", [user("group hello"), assistant("hi group")], telegram);
    await store.reset("telegram:-100555", "manual");
    await append("telegram:-100555", [user("after the reset")], telegram);
    // A key of the `crabtalk` scope, whose files are CrabTalk's own family.
    await append("crab:tg:12345", [user("hey"), call("c9", "bash", { cmd: "ls" }), result("c9", "a b")], {
      agent: "crab",
      channel: "crabtalk",
      createdBy: "tg:12345",
    });
    const keys = ["telegram:42", "whatsapp:42", "telegram:-100555", "crab:tg:12345"];
    const contexts = new Map<string, StoredContext>();
    for (const key of keys) contexts.set(key, (await store.loadContext(key))!);
    await store.close();

    const families = new Set(files().map((f) => /^(.*)_\d+(_[^_]*)?\.jsonl$/.exec(f)![1]));
    expect(families.size).toBe(4);
    expect(files()).toContain("crab_tg-12345_1.jsonl");
    for (const key of keys) {
      const context = contexts.get(key)!;
      const own = files().find((f) => metaOf(f).session_id === context.session.id)!;
      const meta = metaOf(own);
      expect(findLatestConversation(dir, meta.agent!, meta.created_by!)).toBe(join(dir, own));
      expect(loadContext(join(dir, own)).messages).toEqual(asCrabtalk(context));
    }
    // What CrabTalk sees of the compacted session: kept calls with their results, not the result whose call
    // the summary stands for.
    const titled = loadContext(
      findLatestConversation(
        dir,
        "main",
        metaOf(files().find((f) => f.includes("lisbon-trip"))!).created_by!,
      )!,
    );
    // The title where CrabTalk reads it: line 1's metadata (and the name it renames the file to).
    expect(titled.meta.title).toBe("Lisbon trip");
    const compacted = titled.messages;
    expect(compacted.map((m) => [m.role, m.tool_call_id || m.content])).toEqual([
      ["user", "User booked the 9:40 flight to Lisbon."],
      ["assistant", "The 9:40 one."],
      ["user", "and hotels?"],
      ["assistant", ""],
      ["tool", "call_2"],
      ["assistant", "None free."],
      ["user", "thanks"],
      ["assistant", ""],
      ["tool", "call_3"],
    ]);

    // sessiond reads back exactly what it stored (and the reset entry that closed a generation).
    const again = open();
    for (const [id, entries] of written)
      expect((await again.readEntries(id)).filter((e) => e.type !== "reset")).toEqual(entries);
    await again.close();
    expect(problems).toEqual([]);
  });

  it("names files as CrabTalk looks them up: the agent as is, sender_slug with ASCII-only lowercasing", async () => {
    const store = open();
    await store.append("Crab:Über:Ü", [user("hallo")], {
      init: { agent: "Crab", channel: "crabtalk", createdBy: "Über:Ü" },
    });
    await store.append("odd agent", [user("x")], {
      init: { agent: "my agent/1", channel: "crabtalk", createdBy: "u" },
    });
    const secretAgent = "sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789ABCD";
    await store.append("secret agent", [user("y")], {
      init: { agent: secretAgent, channel: "crabtalk", createdBy: "u" },
    });
    await store.close();
    expect(files().some((f) => f.includes("Abcdefghijklmnop"))).toBe(false);
    expect(files()).toContain("Crab_Über-Ü_1.jsonl");
    expect(findLatestConversation(dir, "Crab", "Über:Ü")).toBe(join(dir, "Crab_Über-Ü_1.jsonl"));
    // An agent name that is not safe in a file name is slugged: CrabTalk does not find it by that name.
    expect(files().find((f) => f.startsWith("my-agent-1_u-"))).toBeDefined();
  });

  it("reads tool calls, ids and reasoning from lines CrabTalk wrote", async () => {
    const meta = { agent: "crab", created_by: "user", created_at: "2026-11-30T08:40:00+00:00", title: "" };
    const lines = [
      { ...meta, uptime_secs: 1 },
      { role: "user", content: "book" },
      {
        role: "assistant",
        reasoning_content: "use the tool",
        tool_calls: [
          { id: "call_9", type: "function", function: { name: "flights", arguments: '{"to":"LIS"}' } },
          { id: "call_10", type: "function", function: { name: "echo", arguments: "not json" } },
        ],
      },
      { role: "tool", content: "3 options", name: "flights", tool_call_id: "call_9" },
    ];
    writeFileSync(join(dir, "crab_user_1.jsonl"), lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    const store = open();
    const context = (await store.loadContext("crab:user"))!;
    await store.close();
    expect(context.entries).toMatchObject([
      { role: "user", content: "book" },
      {
        role: "assistant",
        content: "",
        parts: [{ kind: "thinking", text: "use the tool" }],
        toolCalls: [
          { id: "call_9", name: "flights", arguments: { to: "LIS" } },
          { id: "call_10", name: "echo", arguments: { input: "not json" } },
        ],
      },
      { role: "tool", content: "3 options", toolCallId: "call_9" },
    ]);
  });

  it("a fork is a new file whose metadata line names its origin; CrabTalk loads it as the fork's own messages", async () => {
    let store = open();
    const init = { agent: "main", channel: "telegram", createdBy: "42" };
    const parent = await store.append("telegram:42", [user("one"), assistant("reply one"), user("two")], {
      init,
    });
    const fork = await store.fork("telegram:42", { toKey: "admin-fork-x", atSeq: 2 });
    await store.append("admin-fork-x", [user("fork question"), assistant("fork answer")]);
    await store.close();
    const file = files().find((f) => metaOf(f).session_id === fork.session.id)!;
    expect(JSON.parse(readFileSync(join(dir, file), "utf8").split("\n")[0]!).forked_from).toEqual({
      key: "telegram:42",
      session_id: parent.session.id,
      seq: 2,
      message_count: 2,
      approx_tokens: expect.any(Number),
      context_from_seq: 1,
    });
    const crab = loadContext(join(dir, file));
    expect(crab.meta.agent).toBe("main");
    expect(crab.messages.map((m) => `${m.role}:${m.content}`)).toEqual([
      "user:fork question",
      "assistant:fork answer",
    ]);
    store = open();
    expect((await store.readEntries(fork.session.id)).map((e) => e.type === "message" && e.content)).toEqual([
      "one",
      "reply one",
      "fork question",
      "fork answer",
    ]);
    expect(await store.getSession("admin-fork-x")).toMatchObject({ entryCount: 4, messageCount: 4 });
    await store.close();
    // A damaged forked_from is reported with its file and line; the fork's own entries still read.
    const [line1, ...rest] = readFileSync(join(dir, file), "utf8").split("\n");
    const meta = JSON.parse(line1!) as Record<string, unknown>;
    writeFileSync(
      join(dir, file),
      [JSON.stringify({ ...meta, forked_from: { seq: "two" } }), ...rest].join("\n"),
    );
    rmSync(join(dir, ".sessiond", "index.json"), { force: true });
    store = open();
    expect((await store.readEntries(fork.session.id)).map((e) => e.type === "message" && e.content)).toEqual([
      "fork question",
      "fork answer",
    ]);
    expect(problems).toContainEqual(
      expect.objectContaining({ file, line: 1, reason: expect.stringContaining("forked_from is damaged") }),
    );
    await store.close();
  });

  it("a file CrabTalk retitled (metadata rewritten, sessiond's fields gone) keeps its key and generation", async () => {
    let store = open();
    const init = { agent: "main", channel: "telegram", createdBy: "42" };
    const first = await store.append("telegram:42", [user("one"), assistant("reply one")], { init });
    await store.reset("telegram:42", "manual");
    await store.append("telegram:42", [user("two")]);
    await store.append("whatsapp:42", [user("other key")], { init: { ...init, channel: "whatsapp" } });
    await store.close();
    // CrabTalk's set_title: metadata rewritten with its own fields only, the file renamed `{stem}_{slug}`.
    const file = files().find((f) => metaOf(f).session_id === first.session.id)!;
    const [line1, ...rest] = readFileSync(join(dir, file), "utf8").split("\n");
    const old = JSON.parse(line1!) as Record<string, unknown>;
    const crabMeta = {
      agent: old.agent,
      created_by: old.created_by,
      created_at: "2026-12-01T10:00:00+00:00",
    };
    writeFileSync(
      join(dir, file),
      [JSON.stringify({ ...crabMeta, title: "Day one", uptime_secs: 3 }), ...rest].join("\n"),
    );
    renameSync(join(dir, file), join(dir, file.replace(/\.jsonl$/, "_day-one.jsonl")));

    store = open();
    const gens = await store.generations("telegram:42");
    expect(gens.map((g) => [g.generation, g.id, g.state])).toEqual([
      [2, expect.any(String), "active"],
      [1, first.session.id, "archived"],
    ]);
    expect((await store.readEntries(first.session.id)).map((e) => e.type === "message" && e.content)).toEqual(
      ["one", "reply one", false],
    );
    expect(
      (await store.loadContext("telegram:42"))!.entries.map((e) => e.type === "message" && e.content),
    ).toEqual(["two"]);
    expect(
      (await store.listSessions({ includeArchived: true, limit: 100 })).sessions.map((s) => s.key).sort(),
    ).toEqual(["telegram:42", "telegram:42", "whatsapp:42"]);
    await store.close();
  });
});
