import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Client, type Frame, type Harness, startHarness, TOKEN } from "./helpers.js";

describe("websocket methods", () => {
  let h: Harness;
  const clients: Client[] = [];

  const open = async (query: Record<string, string> = {}): Promise<Client> => {
    const client = await Client.open(h.url({ token: TOKEN, ...query }));
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    h = await startHarness();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await h.close();
  });

  it("chat.send streams chat.delta events before its result, and the deltas make the reply", async () => {
    const client = await open({ channel: "telegram", peer: "alice" });
    const res = await client.request("chat.send", { message: "hello there" });
    expect(res.ok).toBe(true);
    const result = res.result as { key: string; reply: string; seq: number };
    expect(result.reply).toContain('You said: "hello there"');

    const resAt = client.frames.indexOf(res);
    const deltas = client.frames.filter((f) => f.event === "chat.delta" && f.data?.id === res.id);
    expect(deltas.length).toBeGreaterThan(1);
    for (const delta of deltas) {
      expect(client.frames.indexOf(delta)).toBeLessThan(resAt);
      expect(delta.data?.key).toBe(result.key);
    }
    expect(deltas.map((d) => d.data?.delta).join("")).toBe(result.reply);

    const history = await client.call("conversations.history", { session: result.key });
    const entries = history.entries as Array<{ seq: number; role?: string; content?: string }>;
    expect(entries.map((e) => e.content)).toEqual(["hello there", result.reply]);
    expect(entries.at(-1)?.seq).toBe(result.seq);
  });

  it("gives web connections admin-conn-<connection id>, or the admin- session they name", async () => {
    const web = await open({ channel: "web" });
    const own = await web.call("chat.send", { message: "hi" });
    expect(own.key).toBe(`admin-conn-${web.connectionId}`);

    const named = await web.call("chat.send", { message: "hi", session: "admin-notes" });
    expect(named.key).toBe("admin-notes");

    // A browser cannot reach someone else's session by naming it: INVALID_KEY, as on REST, and nothing stored.
    const foreign = await web.request("chat.send", { message: "hi", session: "p2p:bob:main" });
    expect(foreign).toMatchObject({ ok: false, error: { code: "INVALID_KEY" } });
    expect(await h.engine.sessions.get("p2p:bob:main")).toBeUndefined();

    const webNamed = await open({ channel: "web", session: "admin-page" });
    expect((await webNamed.call("chat.send", { message: "hi" })).key).toBe("admin-page");

    const otherWeb = await open({ channel: "web" });
    expect(otherWeb.connectionId).not.toBe(web.connectionId);
    expect((await otherWeb.call("chat.send", { message: "hi" })).key).toBe(
      `admin-conn-${otherWeb.connectionId}`,
    );
  });

  it("refuses parameters a method does not take, naming those it does", async () => {
    const client = await open({ channel: "cli", peer: "zed" });
    const old = await client.request("chat.send", { text: "hi" });
    expect(old).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENT" } });
    expect(old.error?.message).toBe("chat.send takes message, session, agent, incognito; unknown: text");
    const list = await client.request("sessions.list", { limt: 5 });
    expect(list).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENT" } });
    expect((await client.request("sessions.watch", { all: true })).ok).toBe(false);
  });

  it("lets other clients name their session, else gives them p2p:<peer>:<default agent>", async () => {
    const agent = h.engine.routing.defaultAgent;
    const peer = await open({ channel: "cli", peer: "carol" });
    expect((await peer.call("chat.send", { message: "hi" })).key).toBe(`p2p:carol:${agent}`);
    expect((await peer.call("chat.send", { message: "hi", session: "project-x" })).key).toBe("project-x");

    const named = await open({ channel: "cli", peer: "dave", session: "dave-notes" });
    expect((await named.call("chat.send", { message: "hi" })).key).toBe("dave-notes");
    const session = await h.engine.sessions.get("dave-notes");
    expect(session?.createdBy).toBe("dave");
  });

  it("sessions.list answers CrabTalk's SessionList fields", async () => {
    const client = await open({ channel: "cli", peer: "erin" });
    const { key } = await client.call("chat.send", { message: "first" });
    const { sessions } = (await client.call("sessions.list")) as { sessions: Frame["data"][] };
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toEqual({
      id: key,
      agent: h.engine.routing.defaultAgent,
      created_by: "erin",
      message_count: 2,
      alive_secs: expect.any(Number),
      active: false,
      title: expect.any(String),
    });
  });

  it("conversations.list filters by agent and sender", async () => {
    const alice = await open({ channel: "cli", peer: "alice" });
    const bob = await open({ channel: "cli", peer: "bob" });
    const a = await alice.call("chat.send", { message: "from alice" });
    const b = await bob.call("chat.send", { message: "from bob" });
    const agent = h.engine.routing.defaultAgent;

    const forAlice = await alice.call("conversations.list", { agent, sender: "alice" });
    expect((forAlice.conversations as Array<{ id: string }>).map((c) => c.id)).toEqual([a.key]);
    const all = await alice.call("conversations.list", { agent });
    expect((all.conversations as Array<{ id: string }>).map((c) => c.id).sort()).toEqual(
      [a.key, b.key].sort(),
    );
    const otherAgent = await alice.call("conversations.list", { agent: "nobody", sender: "alice" });
    expect(otherAgent.conversations).toEqual([]);
  });

  it("sessions.compact answers the summary, and fails for a missing session", async () => {
    const client = await open({ channel: "cli", peer: "frank" });
    const { key } = await client.call("chat.send", { message: "remember the code word PELICAN-42" });
    await client.call("chat.send", { message: "second message" });
    const compacted = await client.call("sessions.compact", { session: key });
    expect(compacted.key).toBe(key);
    expect(typeof compacted.summary).toBe("string");
    expect(compacted.summary).toContain("PELICAN-42");
    const history = await client.call("conversations.history", { session: key });
    const stored = (history.entries as Array<{ type: string; summary?: string }>).filter(
      (e) => e.type === "compaction",
    );
    expect(stored.map((e) => e.summary)).toEqual([compacted.summary]);

    const missing = await client.request("sessions.compact", { session: "no-such-session" });
    expect(missing).toMatchObject({ ok: false, error: { code: "SESSION_NOT_FOUND" } });
  });

  it("conversations.history without a session reads the connection's own", async () => {
    const client = await open({ channel: "cli", peer: "gina" });
    await client.call("chat.send", { message: "one" });
    await client.call("chat.send", { message: "two" });
    const last = await client.call("conversations.history", { limit: 1 });
    expect(last.key).toBe(`p2p:gina:${h.engine.routing.defaultAgent}`);
    const entries = last.entries as Array<{ content?: string }>;
    expect(entries).toHaveLength(1);
    expect(entries[0]?.content).toContain('You said: "two"');
  });

  it("conversations.history takes all, as the REST history does, for earlier generations too", async () => {
    const client = await open({ channel: "cli", peer: "hank" });
    const { key } = await client.call("chat.send", { message: "before the reset" });
    await h.engine.reset(String(key));
    await client.call("chat.send", { message: "after the reset" });
    const texts = async (params: Record<string, unknown>) =>
      ((await client.call("conversations.history", params)).entries as Array<{ content?: string }>)
        .map((e) => e.content ?? "")
        .filter((c) => c.startsWith("before") || c.startsWith("after"));
    expect(await texts({ session: key })).toEqual(["after the reset"]);
    expect(await texts({ session: key, all: true })).toEqual(["before the reset", "after the reset"]);
    const old = await client.request("conversations.history", { session: key, includeArchived: true });
    expect(old).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENT" } });
  });
});
