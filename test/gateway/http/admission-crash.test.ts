import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startHeldModel, writeModelConfig } from "../../support/held-model.js";
import { servedGateways } from "../../support/serve-child.js";

const TOKEN = "admission-crash-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const { serve, cleanups } = servedGateways(TOKEN);

describe("durable admission across a SIGKILL", () => {
  it("runs or reports each of 10 inputs queued on one key after a restart, none twice", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-admission-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // First life: the model holds every reply, so the first turn runs and the other nine wait.
    const model = await startHeldModel();
    cleanups.push(() => model.close());
    const { asked } = model;
    writeModelConfig(dir, model.server);

    const a = serve(dir);
    const urlA = await a.listening();
    const ids: string[] = [];
    let key = "";
    for (let i = 1; i <= 10; i++) {
      const response = await fetch(`${urlA}/api/chat?async=1`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ message: `m${i}`, session_id: "admin-crash" }),
      });
      expect(response.status).toBe(202);
      const body = (await response.json()) as { id: string; key: string; state: string };
      expect(body.state).toBe("queued");
      expect(response.headers.get("location")).toBe(`/api/turns/${body.id}`);
      ids.push(body.id);
      key = body.key;
    }
    await model.firstAsked;
    const queued = (await (await fetch(`${urlA}/api/turns/${ids[9]}`, { headers: auth })).json()) as {
      state: string;
    };
    expect(queued.state).toBe("queued");
    const killed = new Promise((r) => a.child.once("exit", r));
    a.child.kill("SIGKILL");
    await killed;
    expect(asked).toEqual(["m1"]);

    // Second life on the same data dir: the model answers at once.
    model.answerAtOnce();
    const b = serve(dir);
    const urlB = await b.listening();
    expect(b.output.text).toContain("recovered inputs: 9 queued again, 0 already answered, 1 interrupted");
    // A new message on the key queues behind the recovered ones: once it is answered, they all are.
    const after = await fetch(`${urlB}/api/chat`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ message: "m11", session_id: "admin-crash" }),
    });
    expect(after.status).toBe(200);

    expect(asked).toEqual(["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10", "m11"]);
    const history = (await (
      await fetch(`${urlB}/api/sessions/${encodeURIComponent(key)}/history`, { headers: auth })
    ).json()) as { entries: Array<{ type: string; role?: string; content?: string; code?: string }> };
    const users = history.entries.filter((e) => e.role === "user").map((e) => e.content);
    expect(users).toEqual(["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10", "m11"]);
    const replies = history.entries.filter((e) => e.role === "assistant").map((e) => e.content);
    expect(replies).toEqual(
      ["m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10", "m11"].map((m) => `echo: ${m}`),
    );
    expect(history.entries.filter((e) => e.code === "TURN_INTERRUPTED")).toHaveLength(1);

    const states = await Promise.all(
      ids.map(async (id) => {
        const status = (await (await fetch(`${urlB}/api/turns/${id}`, { headers: auth })).json()) as {
          state: string;
          reply?: string;
        };
        return status.state;
      }),
    );
    expect(states).toEqual(["interrupted", ...Array.from({ length: 9 }, () => "done")]);
    const done = (await (await fetch(`${urlB}/api/turns/${ids[1]}`, { headers: auth })).json()) as {
      reply: string;
    };
    expect(done.reply).toBe("echo: m2");
  });
});
