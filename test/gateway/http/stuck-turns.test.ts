import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../../src/lifecycle/clock.js";
import { HeldRuntime } from "../../support/held-runtime.js";
import { postJson, startTestGateway, type TestGateway } from "./helpers.js";

let gw: TestGateway | undefined;
let held: HeldRuntime;
afterEach(async () => {
  for (const run of held?.runs ?? []) run.release();
  await gw?.stop();
  gw = undefined;
});

interface Running {
  id: string;
  key: string;
  startedAt: number;
  lastEventAt: number;
  events: number;
  stuck: boolean;
}

async function running(): Promise<Running[]> {
  const inspect = (await (await (gw as TestGateway).api("/api/inspect")).json()) as unknown as {
    running: Running[];
  };
  return inspect.running;
}

async function stuckMetric(): Promise<string | undefined> {
  const text = await (await (gw as TestGateway).api("/metrics")).text();
  return /^sessiond_turns_stuck (\d+)$/m.exec(text)?.[1];
}

describe("stuck turns", () => {
  it("are reported once their runtime is quiet for turns.stuck_after and can be aborted, the partial reply kept", async () => {
    const clock = new ManualClock(5_000_000);
    held = new HeldRuntime();
    gw = await startTestGateway(
      {
        turns: { stuckAfterMs: 60_000 },
        agentOptions: { main: { queue: { debounceMs: 0 } } },
        lifecycle: { clock, timer: clock },
      },
      { runtimes: new Map([["main", held.runtime]]) },
    );
    const { api } = gw;
    const accepted = (await (
      await api("/api/chat?async=1", postJson({ message: "slow" }))
    ).json()) as unknown as {
      id: string;
    };
    await held.started(1);
    expect(await running()).toEqual([
      {
        id: accepted.id,
        key: "admin-session",
        startedAt: 5_000_000,
        lastEventAt: 5_000_000,
        events: 1,
        stuck: false,
      },
    ]);
    expect(await stuckMetric()).toBe("0");
    clock.advance(59_999);
    expect((await running())[0]?.stuck).toBe(false);
    clock.advance(1);
    expect((await running())[0]?.stuck).toBe(true);
    expect(await stuckMetric()).toBe("1");

    // A second input waits behind it: aborting a waiting one cancels it.
    const waiting = (await (
      await api("/api/chat?async=1", postJson({ message: "next" }))
    ).json()) as unknown as {
      id: string;
    };
    expect(await (await api(`/api/turns/${waiting.id}/abort`, { method: "POST" })).json()).toEqual({
      id: waiting.id,
      cancelled: true,
    });
    expect(await (await api(`/api/turns/${accepted.id}/abort`, { method: "POST" })).json()).toEqual({
      id: accepted.id,
      aborted: true,
    });
    expect(held.runs[0]?.aborted).toBe(true);
    // FIFO: once this turn is answered, the aborted one has ended.
    const after = api("/api/chat", postJson({ message: "after" }));
    await held.started(2);
    held.runs[1]?.release();
    expect((await after).status).toBe(200);

    const status = (await (await api(`/api/turns/${accepted.id}`)).json()) as unknown as Record<
      string,
      unknown
    >;
    expect(status).toMatchObject({ state: "interrupted", error: { code: "TURN_INTERRUPTED" } });
    const history = (await (await api("/api/sessions/admin-session/history")).json()) as unknown as {
      entries: Array<{ type: string; role?: string; content?: string; code?: string; text?: string }>;
    };
    expect(history.entries.slice(0, 3)).toMatchObject([
      { type: "message", role: "user", content: "slow" },
      { type: "message", role: "assistant", content: "partial:slow" },
      {
        type: "note",
        code: "TURN_INTERRUPTED",
        text: "The reply above was cut off: an operator aborted the turn.",
      },
    ]);
    expect(await running()).toEqual([]);
    expect(await stuckMetric()).toBe("0");
    expect((await api(`/api/turns/${accepted.id}/abort`, { method: "POST" })).status).toBe(404);
  });
});
