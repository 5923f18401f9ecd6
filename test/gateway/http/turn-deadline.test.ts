import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import type { Runtime, RuntimeEvent, RuntimeRun } from "../../../src/runtimes/index.js";
import { startTestGateway } from "./helpers.js";

const post = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe("a turn's deadline", () => {
  it("reads turn_timeout (seconds) per agent from the config", () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-deadline-"));
    try {
      writeFileSync(join(dir, "sessiond.yaml"), "agents:\n  - id: main\n    turn_timeout: 90\n");
      expect(loadConfig({ cwd: dir, env: {} }).config.agentOptions?.main?.turnTimeoutMs).toBe(90_000);
      writeFileSync(join(dir, "sessiond.yaml"), "agents:\n  - id: main\n    turn_timeout: 0\n");
      expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(/turn_timeout/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("aborts a hung runtime, frees the lane, records a note and marks the agent as needing attention", async () => {
    let abortedWith: unknown;
    // Hangs on "hang" and ignores its signal (it only notes the abort); answers anything else.
    const hanging: Runtime = {
      kind: "test",
      keeps: { runtimeSessions: false, costs: false },
      async *run(run: RuntimeRun): AsyncGenerator<RuntimeEvent> {
        if (run.input === "hang") {
          run.signal.addEventListener("abort", () => {
            abortedWith = run.signal.reason;
          });
          await new Promise(() => {});
        }
        yield { type: "text", delta: `ok: ${run.input}` };
      },
    };
    const gw = await startTestGateway(
      { agentOptions: { main: { turnTimeoutMs: 200 } } },
      { runtimes: new Map([["main", hanging]]) },
    );
    try {
      const hung = await gw.api("/api/webhook", post({ peer: "p1", message: "hang" }));
      expect(hung.status).toBe(504);
      expect((await hung.json()).error.code).toBe("TURN_TIMEOUT");
      expect(abortedWith).toMatchObject({ code: "TURN_TIMEOUT" });
      const key = (await gw.engine.sessions.list({})).sessions[0]!.key;
      const shown = await gw.api(`/api/sessions/${encodeURIComponent(key)}`);
      expect(((await shown.json()) as unknown as { needsAttention?: unknown }).needsAttention).toBeTruthy();
      // The lane is free: the next turn on the same session runs and clears the mark.
      const next = await gw.api("/api/webhook", post({ peer: "p1", message: "again" }));
      expect(next.status).toBe(200);
      expect((await next.json()).reply).toBe("ok: again");
      const history = await gw.engine.history(key, { limit: 10 });
      expect(history.find((e) => e.type === "note")).toMatchObject({ code: "TURN_TIMEOUT", level: "error" });
    } finally {
      await gw.stop();
    }
  }, 20_000);
});
