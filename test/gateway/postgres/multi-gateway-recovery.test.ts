import { describe, expect, it } from "vitest";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import type { ChatHandler } from "../../support/openai-server.js";
import { connectWs, multiGatewaySuite, queryDb, within } from "./gateways.js";

const suite = multiGatewaySuite();

// Long enough that a live gateway's heartbeat (renewed every third of it) never lapses on a loaded machine.
const TTL_MS = 6000;
const TEXT = /(\S+)$/;
const inputOf = (body: Parameters<ChatHandler>[0]) => {
  const last = [...body.messages].reverse().find((m) => m.role === "user");
  return TEXT.exec(typeof last?.content === "string" ? last.content : "")?.[1] ?? "";
};

async function entriesOf(url: string, key: string) {
  const store = await PostgresStore.open({ url });
  try {
    const session = (await store.getSession(key))!;
    return await store.readEntries(session.id);
  } finally {
    await store.close();
  }
}

describe("recovery with several gateways on one PostgreSQL database", () => {
  it("runs each of a killed gateway's 10 queued inputs exactly once on the live ones, and never touches a live gateway's inputs", async () => {
    const [url, [a, b]] = await within(120_000, "two gateways to start", suite.gatewaysOn(2, TTL_MS));
    const runs = new Map<string, number>();
    let held = 0;
    let bothHeld!: () => void;
    const holding = new Promise<void>((resolve) => {
      bothHeld = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    suite.model.setHandler(async (body) => {
      const input = inputOf(body);
      runs.set(input, (runs.get(input) ?? 0) + 1);
      if (input.startsWith("hold")) {
        if (++held === 2) bothHeld();
        await released;
      }
      return { content: `echo: ${input}` };
    });
    const keys = ["admin-r1", "admin-r2"];
    // b holds both keys' leases with a turn at the model, and has one more input queued behind one.
    await b!.start(keys[0]!, "hold-1");
    await b!.start(keys[1]!, "hold-2");
    await holding;
    await b!.start(keys[0]!, "b-queued");
    // a admits 10 inputs (each in the inbox once its 202 is back); they wait in a for b's leases.
    const mine = Array.from({ length: 10 }, (_, i) => `a-${i}`);
    for (const [i, text] of mine.entries()) await a!.start(keys[i % 2]!, text);
    const owners = await queryDb<{ text: string; owner: string }>(
      url,
      "SELECT envelope->>'text' AS text, owner FROM inbox ORDER BY n",
    );
    const ownerOf = (text: string) => owners.find((r) => r.text === text)!.owner;
    const ownerA = ownerOf("a-0");
    const ownerB = ownerOf("hold-1");
    expect(ownerA).not.toBe(ownerB);

    const exited = new Promise((resolve) => a!.child.once("exit", resolve));
    a!.child.kill("SIGKILL");
    await exited;
    // c starts while b still runs its turns: its recovery must leave b's inputs (running, queued) alone.
    const c = await within(
      120_000,
      "the third gateway to start (its recovery must not wait on the live gateway's turns)",
      suite.another(url, TTL_MS),
    );
    const everything = [...mine, "hold-1", "hold-2", "b-queued"];
    const watcher = await connectWs(b!);
    for (const key of keys)
      expect((await watcher.request("sessions.subscribe", { session: key })).ok).toBe(true);
    const replied = new Set<string>();
    const allReplied = watcher.event((name, data) => {
      if (name !== "session.appended") return false;
      for (const e of (data as { entries?: Array<{ role?: string; content?: string }> }).entries ?? []) {
        if (e.role === "assistant" && e.content?.startsWith("echo: ")) replied.add(e.content.slice(6));
      }
      return everything.every((text) => replied.has(text));
    });
    release();
    // a's inputs are taken over once its heartbeat lapsed, by b or by c (whichever beat first).
    await within(
      120_000,
      "a live gateway to take the killed one's inputs over",
      Promise.race([b!.printed(/took over inputs/), c.printed(/took over inputs|recovered inputs/)]),
    );
    await within(
      120_000,
      () => `a reply to every input (replied: ${[...replied].join(" ")}; runs: ${JSON.stringify([...runs])})`,
      allReplied,
    );
    watcher.close();
    // Every input ends done (the inbox hears of it just after the reply): none interrupted, failed, twice.
    await expect
      .poll(
        async () =>
          (await queryDb<{ state: string }>(url, "SELECT state FROM inbox")).filter((r) => r.state !== "done")
            .length,
        { timeout: 60_000, interval: 200 },
      )
      .toBe(0);
    expect(Object.fromEntries(runs)).toEqual(Object.fromEntries(everything.map((t) => [t, 1])));
    const after = await queryDb<{ text: string; owner: string }>(
      url,
      "SELECT envelope->>'text' AS text, owner FROM inbox",
    );
    const ownerAfter = (text: string) => after.find((r) => r.text === text)!.owner;
    for (const text of ["hold-1", "hold-2", "b-queued"]) expect(ownerAfter(text)).toBe(ownerB);
    for (const text of mine) expect(ownerAfter(text)).not.toBe(ownerA);
    for (const key of keys) {
      const entries = await entriesOf(url, key);
      expect(entries.filter((e) => e.type === "note" && e.code === "TURN_INTERRUPTED")).toEqual([]);
      const users = entries.flatMap((e) => (e.type === "message" && e.role === "user" ? [e.content] : []));
      // Each input stored once, and a's in the order a admitted them.
      const texts = users.map((u) => TEXT.exec(u)?.[1]);
      expect(new Set(texts).size).toBe(texts.length);
      const ofA = texts.filter((t) => t?.startsWith("a-"));
      expect(ofA).toEqual(mine.filter((_, i) => keys[i % 2] === key));
    }
  }, 420_000);
});
