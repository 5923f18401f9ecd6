import { afterEach, describe, expect, it } from "vitest";
import { HeldRuntime } from "../../support/held-runtime.js";
import { json, postJson, startTestGateway, type TestGateway } from "./helpers.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

interface Inspect {
  queued: Array<{ id: string; key: string; preview: string; mode: string }>;
  sessions: Array<{ key: string; queuedTurns: number }>;
}

describe("queued inputs over HTTP", () => {
  it("shows waiting inputs in GET /api/inspect and cancels one with DELETE /api/turns/{id}", async () => {
    const held = new HeldRuntime();
    gw = await startTestGateway(
      { agentOptions: { main: { queue: { mode: "followup", debounceMs: 0 } } } },
      { runtimes: new Map([["main", held.runtime]]) },
    );
    const api = gw.api;
    const first = api("/api/chat", postJson({ message: "first" }));
    await held.started(1);
    const second = api("/api/chat", postJson({ message: "second" }));
    let inspect: Inspect = { queued: [], sessions: [] };
    // Each poll is a real request: the second one is queued by the time one of them sees it.
    for (let i = 0; i < 200 && inspect.queued.length === 0; i++) {
      inspect = (await (await api("/api/inspect")).json()) as unknown as Inspect;
    }
    expect(inspect.queued).toEqual([
      {
        id: expect.any(String),
        key: "admin-session",
        agent: "main",
        preview: "second",
        mode: "followup",
        admittedAt: expect.any(Number),
      },
    ]);
    expect(inspect.sessions.find((s) => s.key === "admin-session")?.queuedTurns).toBe(2);

    const id = inspect.queued[0]?.id ?? "";
    const cancel = await api(`/api/turns/${id}`, { method: "DELETE" });
    expect(await cancel.json()).toEqual({ id, cancelled: true });
    const refused = await second;
    expect(refused.status).toBe(409);
    expect((await json(refused)).error.code).toBe("TURN_CANCELLED");
    expect((await api(`/api/turns/${id}`, { method: "DELETE" })).status).toBe(404);

    held.runs[0]?.release();
    expect((await json(await first)).reply).toBe("partial:first done");
    expect(held.runs).toHaveLength(1);
  });
});
