import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Client, type Frame, type Harness, startHarness, TOKEN } from "./helpers.js";

const init = { agent: "main", channel: "cli", createdBy: "u" };
const changes = (client: Client): Frame[] =>
  client.frames.filter((f) => f.type === "event" && f.event === "sessions.changed");

describe("websocket sessions.watch", () => {
  let h: Harness;

  beforeEach(async () => {
    h = await startHarness();
  });

  afterEach(async () => {
    await h.close();
  });

  it("tells a watcher of every session's changes, with the session row and no entries", async () => {
    const watcher = await Client.open(h.url({ token: TOKEN, channel: "web", peer: "dashboard" }));
    expect(await watcher.call("sessions.watch")).toEqual({ watching: true });
    // Watching twice keeps one subscription: each change still arrives once.
    await watcher.call("sessions.watch");

    await h.engine.append("one", [{ type: "message", role: "user", content: "first" }], {
      init: { agent: "main", channel: "cli", createdBy: "u1" },
    });
    await h.engine.append("two", [{ type: "message", role: "user", content: "second" }], {
      init: { agent: "main", channel: "cli", createdBy: "u2" },
    });
    await watcher.next((f) => f.event === "sessions.changed" && f.data?.key === "two");
    await h.engine.reset("one", "api");
    await h.engine.delete("two");
    await watcher.next((f) => f.event === "sessions.changed" && f.data?.type === "deleted");

    const seen = changes(watcher).map((f) => [f.data?.type, f.data?.key]);
    expect(seen).toEqual([
      ["appended", "one"],
      ["appended", "two"],
      ["reset", "one"],
      ["deleted", "two"],
    ]);
    const first = changes(watcher)[0]?.data as { session: { key: string; messageCount: number } };
    expect(first.session).toMatchObject({ key: "one", messageCount: 1 });
    expect(first).not.toHaveProperty("entries");
    const reset = changes(watcher)[2]?.data as { session: { generation: number } };
    expect(reset.session.generation).toBe(2);
    await watcher.close();
  });

  it("sends a burst of appends on one key as few events, the last with the final row", async () => {
    const watcher = await Client.open(h.url({ token: TOKEN, channel: "web", peer: "dashboard" }));
    await watcher.call("sessions.watch");
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h.engine.append("busy", [{ type: "message", role: "user", content: `m${i}` }], { init }),
      ),
    );
    const last = await watcher.next(
      (f) =>
        f.event === "sessions.changed" && (f.data?.session as { messageCount?: number })?.messageCount === 20,
    );
    expect(last.data?.type).toBe("appended");
    expect(changes(watcher).length).toBeLessThan(20);
    await watcher.close();
  });

  it("reports turns starting and finishing, and stops after sessions.unwatch", async () => {
    const watcher = await Client.open(h.url({ token: TOKEN, channel: "web", peer: "dashboard" }));
    const writer = await Client.open(h.url({ token: TOKEN, channel: "cli", peer: "kim" }));
    await watcher.call("sessions.watch");
    const { key } = await writer.call("chat.send", { message: "hello" });
    await watcher.next((f) => f.data?.type === "turn.finished");
    // Within one interval a key's turn events collapse into the latest: the turn has finished.
    const types = changes(watcher).map((f) => f.data?.type);
    expect(types).toContain("appended");
    expect(types.at(-1)).toBe("turn.finished");
    expect(changes(watcher).at(-1)?.data).toMatchObject({ ok: true });
    expect(changes(watcher).every((f) => f.data?.key === key)).toBe(true);

    expect(await watcher.call("sessions.unwatch")).toEqual({ watching: false });
    const before = changes(watcher).length;
    await writer.call("chat.send", { message: "again" });
    // A request after the turn: its answer arrives after any event the turn could have caused.
    await watcher.call("sessions.list");
    expect(changes(watcher)).toHaveLength(before);
    await watcher.close();
    await writer.close();
  });
});
