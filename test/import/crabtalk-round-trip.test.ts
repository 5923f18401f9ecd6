import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importSessions } from "../../src/import/importer.js";
import { readSource } from "../../src/import/read-source.js";
import type { Entry, EntryInput } from "../../src/model/entry.js";
import type { Session } from "../../src/model/session.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import type { Store } from "../../src/store/store.js";
import { useImportDir } from "./helpers.js";

// sessiond -> CrabTalk's format (the JSONL store's directory) -> sessiond: every session, generation and
// entry comes back as it was written.
const t = useImportDir();

const T0 = Date.parse("2026-12-01T09:00:00Z");
const at = (s: number) => T0 + s * 1000;

const HISTORY: EntryInput[] = [
  { type: "message", role: "system", content: "be brief", ts: at(0) },
  {
    type: "message",
    role: "user",
    content: "weather in Lisbon?",
    sender: { id: "u1", name: "Ann" },
    ts: at(1),
  },
  {
    type: "message",
    role: "assistant",
    content: "",
    parts: [{ kind: "thinking", text: "use the tool" }],
    toolCalls: [{ id: "call_1", name: "weather", arguments: { city: "Lisbon", days: [1, 2] } }],
    ts: at(2),
  },
  {
    type: "message",
    role: "tool",
    content: "21C",
    toolCallId: "call_1",
    parts: [{ kind: "tool", name: "weather" }],
    ts: at(3),
  },
  { type: "message", role: "assistant", content: "21C and clear.", ts: at(4) },
  { type: "note", text: "runtime restarted", level: "warn", code: "RUNTIME", ts: at(5) },
  {
    type: "compaction",
    summary: "Ann asked for Lisbon's weather: 21C.",
    fromSeq: 1,
    throughSeq: 4,
    firstKeptSeq: 5,
    tokensBefore: 40,
    tokensAfter: 9,
    summarizer: "main",
    model: "gpt-5",
    ts: at(6),
  },
  { type: "title", title: "Lisbon weather", by: "titler", ts: at(7) },
  { type: "message", role: "user", content: "thanks", ts: at(8) },
];

/** What must survive: everything but the store's own ids. */
function comparable(entries: readonly Entry[]): unknown[] {
  // The reset closing a generation is the store's own write: its time is the import's (README, migration).
  return entries.map(({ id: _id, idempotencyKey: _key, sessionId: _session, ...rest }) =>
    rest.type === "reset" ? { ...rest, nextSessionId: undefined, ts: undefined } : rest,
  );
}
function facts(s: Session) {
  const { id: _id, ...rest } = s;
  return { ...rest, archivedAt: undefined, lastActivityAt: undefined, overrides: undefined };
}

async function everything(store: Store) {
  const sessions = (await store.listSessions({ includeArchived: true })).sessions.sort(
    (a, b) => a.key.localeCompare(b.key) || a.generation - b.generation,
  );
  return Promise.all(
    sessions.map(async (s) => ({ session: facts(s), entries: comparable(await store.readEntries(s.id)) })),
  );
}

describe("CrabTalk round trip", () => {
  it("sessiond -> CrabTalk format -> sessiond loses nothing", async () => {
    const dir = join(t.dir(), "jsonl");
    const jsonl = new JsonlStore({ path: dir, onProblem: () => undefined });
    try {
      const init = { agent: "main", channel: "telegram", chatType: "direct" as const, createdBy: "12345" };
      await jsonl.append("telegram:12345", HISTORY.slice(0, 5), { init });
      await jsonl.reset("telegram:12345", "idle");
      await jsonl.append("telegram:12345", HISTORY, { init });
      await jsonl.append(
        "ops:slack:C9",
        [{ type: "message", role: "user", content: "deploy?", ts: at(20) }],
        { init: { agent: "ops", channel: "slack", chatType: "channel", createdBy: "u7" } },
      );
      await jsonl.flush();
      const report = await importSessions(t.store(), "crabtalk", readSource("crabtalk", dir));
      expect(report.problems).toEqual([]);
      expect(report.assumptions).toEqual([]);
      expect(await everything(t.store())).toEqual(await everything(jsonl));
    } finally {
      await jsonl.close();
    }
  });
});
