import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { HeldRuntime } from "../../support/held-runtime.js";
import { postJson, startTestGateway, type TestGateway, TOKEN } from "./helpers.js";

let gw: TestGateway | undefined;
let held: HeldRuntime;
afterEach(async () => {
  for (const run of held?.runs ?? []) run.release();
  await gw?.stop();
  gw = undefined;
});

interface Status {
  id: string;
  key: string;
  state: string;
  reply?: string | null;
  error?: { code: string };
}

async function open(resultsMaxBytes?: number): Promise<TestGateway> {
  held = new HeldRuntime();
  gw = await startTestGateway(
    {
      agentOptions: { main: { queue: { debounceMs: 0 } } },
      ...(resultsMaxBytes === undefined ? {} : { turns: { resultsMaxBytes } }),
    },
    { runtimes: new Map([["main", held.runtime]]) },
  );
  return gw;
}

async function status(id: string): Promise<{ code: number; body: Status }> {
  const res = await (gw as TestGateway).api(`/api/turns/${id}`);
  return { code: res.status, body: (await res.json()) as unknown as Status };
}

/** A plain turn on the same session: FIFO, so once it answers every turn before it has ended. */
async function barrier(message: string): Promise<void> {
  const done = (gw as TestGateway).api("/api/chat", postJson({ message }));
  await held.started(held.runs.length + 1);
  held.runs.at(-1)?.release();
  expect((await done).status).toBe(200);
}

describe("asynchronous turns", () => {
  it("answer 202 with the turn's id at once; GET /api/turns/{id} follows it to its reply", async () => {
    const { api } = await open();
    const res = await api("/api/chat", postJson({ message: "later" }, { prefer: "respond-async, wait=0" }));
    expect(res.status).toBe(202);
    expect(res.headers.get("preference-applied")).toBe("respond-async");
    const accepted = (await res.json()) as unknown as Status;
    expect(accepted).toEqual({
      id: expect.any(String),
      key: "admin-session",
      session_id: "admin-session",
      state: "queued",
    });
    expect(res.headers.get("location")).toBe(`/api/turns/${accepted.id}`);
    await held.started(1);
    expect((await status(accepted.id)).body).toMatchObject({
      id: accepted.id,
      key: "admin-session",
      state: "running",
    });
    held.runs[0]?.release();
    await barrier("after");
    expect((await status(accepted.id)).body).toMatchObject({ state: "done", reply: "partial:later done" });
    expect((await status("01NOSUCHTURN")).code).toBe(404);
  });

  it("take ?async=1 on the webhook route, and report a cancelled turn as cancelled", async () => {
    const { api } = await open();
    const first = await api("/api/webhook?async=1", postJson({ peer: "p1", message: "one" }));
    expect(first.status).toBe(202);
    await held.started(1);
    const second = (await (
      await api("/api/webhook?async=1", postJson({ peer: "p1", message: "two" }))
    ).json()) as unknown as Status;
    expect((await status(second.id)).body.state).toBe("queued");
    expect((await api(`/api/turns/${second.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await status(second.id)).body).toMatchObject({
      state: "cancelled",
      error: { code: "TURN_CANCELLED" },
    });
  });

  it("keep finished results within turns.results_max_bytes and answer 410 for an evicted one", async () => {
    // One finished result (about 700 bytes by its strings) fits, two do not: the barrier turns' push it out.
    const { api } = await open(1000);
    const ids: string[] = [];
    for (const message of ["a".repeat(100), "b".repeat(100)]) {
      const res = await api("/api/chat?async=1", postJson({ message }));
      ids.push(((await res.json()) as unknown as Status).id);
      // Its run follows the runs of the messages and barriers before it (the 202 may come first).
      await held.started(ids.length * 2 - 1);
      held.runs.at(-1)?.release();
      await barrier(`barrier ${message[0]}`);
    }
    const evicted = await status(ids[0] as string);
    expect(evicted.code).toBe(410);
    expect(evicted.body).toMatchObject({ error: { code: "RESULT_EVICTED" } });
  });

  it("are answered over the WebSocket by turns.get", async () => {
    const { api, url } = await open();
    const accepted = (await (
      await api("/api/chat?async=1", postJson({ message: "ws" }))
    ).json()) as unknown as Status;
    await held.started(1);
    held.runs[0]?.release();
    await barrier("after");
    const ws = new WebSocket(`${url.replace("http", "ws")}/ws?token=${TOKEN}&channel=web`);
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    const reply = new Promise<Record<string, unknown>>((resolve) => {
      ws.on("message", (raw) => {
        const frame = JSON.parse(raw.toString()) as Record<string, unknown>;
        if (frame.type === "res") resolve(frame);
      });
    });
    ws.send(JSON.stringify({ type: "req", id: "1", method: "turns.get", params: { id: accepted.id } }));
    expect(await reply).toMatchObject({
      ok: true,
      result: { id: accepted.id, state: "done", reply: "partial:ws done" },
    });
    ws.close();
  });
});
