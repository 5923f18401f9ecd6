import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { appendedContents, Client, type Harness, startHarness, TOKEN } from "./helpers.js";

describe("websocket sessions.subscribe", () => {
  let h: Harness;

  beforeEach(async () => {
    h = await startHarness();
  });

  afterEach(async () => {
    await h.close();
  });

  it("delivers appended events for the subscribed key only", async () => {
    const client = await Client.open(h.url({ token: TOKEN, channel: "cli", peer: "hal" }));
    const sub = await client.call("sessions.subscribe", { session: "watched" });
    expect(sub).toEqual({ key: "watched", subscribed: true });

    // On one socket frames arrive in order: every event of a turn comes before that turn's result.
    await client.call("chat.send", { message: "elsewhere", session: "unwatched" });
    const watched = await client.call("chat.send", { message: "here", session: "watched" });

    const events = client.frames.filter((f) => f.type === "event" && f.event?.startsWith("session."));
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.data?.key === "watched")).toBe(true);
    const appended = events.filter((e) => e.event === "session.appended");
    const contents = appended.flatMap(appendedContents);
    expect(contents).toContain("here");
    expect(contents).toContain(watched.reply);
    expect(contents).not.toContain("elsewhere");
    await client.close();
  });

  it("sees turns of other connections, and stops when unsubscribed", async () => {
    const watcher = await Client.open(h.url({ token: TOKEN, channel: "cli", peer: "ivy" }));
    const writer = await Client.open(h.url({ token: TOKEN, channel: "cli", peer: "jay" }));
    const key = `p2p:jay:${h.engine.routing.defaultAgent}`;
    await watcher.call("sessions.subscribe", { session: key });

    const first = await writer.call("chat.send", { message: "first" });
    await watcher.next(
      (f) => f.event === "session.appended" && appendedContents(f).includes(String(first.reply)),
    );

    expect(await watcher.call("sessions.unsubscribe", { session: key })).toEqual({ key, subscribed: false });
    const countAfterUnsubscribe = watcher.frames.filter((f) => f.event === "session.appended").length;
    await writer.call("chat.send", { message: "second" });
    // A round trip on the watcher's socket: anything the engine sent it for "second" would be before this.
    await watcher.call("sessions.list");
    expect(watcher.frames.filter((f) => f.event === "session.appended")).toHaveLength(countAfterUnsubscribe);
    await Promise.all([watcher.close(), writer.close()]);
  });

  it("drops its engine listeners when the socket closes", async () => {
    const before = h.engine.events.listenerCount;
    const client = await Client.open(h.url({ token: TOKEN, channel: "cli", peer: "kim" }));
    await client.call("sessions.subscribe", { session: "a" });
    await client.call("sessions.subscribe", { session: "b" });
    await client.call("sessions.subscribe", { session: "b" });
    expect(h.engine.events.listenerCount).toBe(before + 2);
    await client.close();
    await vi.waitFor(() => expect(h.engine.events.listenerCount).toBe(before));
  });
});
