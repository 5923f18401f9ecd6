import { describe, expect, it } from "vitest";
import { connectWs, type Gateway, multiGatewaySuite, within } from "./gateways.js";

const suite = multiGatewaySuite();

async function twoGateways(): Promise<[Gateway, Gateway]> {
  const [, [a, b]] = await within(120_000, "two gateways to start", suite.gatewaysOn(2, 10_000));
  return [a!, b!];
}

/**
 * Resolves once `b` has seen a turn made on `a` after everything `a` did so far: NOTIFYs reach a process in
 * commit order on its one LISTEN connection, so by then `b` has heard of every earlier change of `a`'s.
 */
async function heardOf(a: Gateway, b: Gateway, marker: string): Promise<void> {
  const watcher = await connectWs(b);
  expect((await watcher.request("sessions.subscribe", { session: "admin-marker" })).ok).toBe(true);
  const seen = watcher.event((name, data) => {
    const entries = (data as { entries?: Array<{ role?: string; content?: string }> }).entries ?? [];
    return name === "session.appended" && entries.some((e) => e.content?.endsWith(marker));
  });
  expect((await a.chat("admin-marker", marker)).status).toBe(200);
  await within(120_000, `gateway b to see ${marker} made on a`, seen);
  watcher.close();
}

describe("settings shared by several gateways on one PostgreSQL database", () => {
  it("use an agent edited through gateway A on gateway B's next turn", async () => {
    const [a, b] = await twoGateways();
    const asked: string[] = [];
    suite.model.setHandler(async (body) => {
      asked.push(body.model);
      return { content: `echo from ${body.model}` };
    });
    expect((await b.chat("admin-edit", "before")).body.reply).toBe("echo from test-model");
    const edited = await a.api("PATCH", "/api/agents/main", { model: "other" });
    expect(edited.status).toBe(200);
    await heardOf(a, b, "after-edit");
    expect((await b.chat("admin-edit", "after")).body.reply).toBe("echo from other-model");
    expect(asked.at(-1)).toBe("other-model");
    const listed = await b.api("GET", "/api/agents/main");
    expect(listed.body.agent).toMatchObject({ name: "main", model: "other" });
  }, 300_000);

  it("list on gateway B a work session started on gateway A, and its end", async () => {
    const [a, b] = await twoGateways();
    suite.model.setHandler(async () => ({ content: "ok" }));
    expect((await a.chat("admin-work", "hello")).status).toBe(200);
    const started = await a.api("POST", "/api/sessions/admin-work/work-session", {
      agent: "main",
      minutes: 30,
    });
    expect(started.status).toBe(201);
    await heardOf(a, b, "after-start");
    const listed = await b.api("GET", "/api/agents/main");
    expect((listed.body.agent as { workSessions: unknown[] }).workSessions).toEqual([
      expect.objectContaining({ agent: "main", key: "admin-work" }),
    ]);
    const ended = await b.api("DELETE", "/api/sessions/admin-work/work-session?agent=main");
    expect(ended.body).toEqual({ ended: true });
    await heardOf(b, a, "after-end");
    const onA = await a.api("GET", "/api/agents/main");
    expect((onA.body.agent as { workSessions: unknown[] }).workSessions).toEqual([]);
  }, 300_000);
});
