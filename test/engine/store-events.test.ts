import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine, type Envelope } from "../../src/index.js";
import { ManualClock } from "../../src/lifecycle/clock.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import type { SessionEvent } from "../../src/turns/events.js";

const dm = (text: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: "5" },
  sender: { id: "5" },
  text,
});

const init = { agent: "main", channel: "telegram", chatType: "direct", createdBy: "test" } as const;

describe("session events come from the store core", () => {
  let dataDir: string;
  let store: Store;
  let engine: Engine;
  let events: SessionEvent[];
  const clock = new ManualClock(Date.UTC(2003, 4, 5));

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-store-events-"));
    store = new SqliteStore({ path: join(dataDir, "s.db") });
    engine = await createEngine({ dataDir, store, titles: { enabled: false }, lifecycle: { clock } });
    events = [];
    engine.events.on((event) => events.push(event));
  });
  afterEach(async () => {
    await engine.close();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("reports what any writer of the store commits, not only what goes through engine.store", async () => {
    // The store object the caller kept (a CLI command, an importer), written without the engine.
    await store.append("telegram:5", [{ type: "message", role: "user", content: "imported" }], { init });
    await store.updateSession("telegram:5", { overrides: { model: "small" } });
    await store.reset("telegram:5", "manual");
    expect(events.map((e) => e.type)).toEqual(["appended", "updated", "reset"]);
    const appended = events[0] as Extract<SessionEvent, { type: "appended" }>;
    expect(appended.entries.map((e) => e.type === "message" && e.content)).toEqual(["imported"]);
    // Dated by the engine's clock like everything else the engine writes.
    expect(appended.entries[0]?.ts).toBe(clock.now());
  });

  it("reports one appended event per commit of a turn, with only the entries it created", async () => {
    await engine.turnWith({ ...dm("hello"), platformMessageId: "m1" }, async () => "hi");
    // A redelivery stores nothing new: no event for it.
    await engine.turnWith({ ...dm("hello"), platformMessageId: "m1" }, async () => "hi again");
    const appended = events.filter(
      (e): e is Extract<SessionEvent, { type: "appended" }> => e.type === "appended",
    );
    expect(appended.map((e) => e.entries.map((x) => x.type === "message" && x.content))).toEqual([
      ["hello"],
      ["hi"],
    ]);
    expect(events.filter((e) => e.type === "turn.finished")).toHaveLength(2);
  });

  it("stops reporting to the engine once it is closed", async () => {
    await engine.close();
    await store.append("telegram:5", [{ type: "message", role: "user", content: "after" }], { init });
    expect(events).toEqual([]);
    engine = await createEngine({ dataDir, store, titles: { enabled: false } });
  });
});
