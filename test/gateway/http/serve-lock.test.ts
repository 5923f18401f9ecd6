import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/store/open.js";
import { startHeldModel, writeModelConfig } from "../../support/held-model.js";
import { servedGateways } from "../../support/serve-child.js";

const TOKEN = "serve-lock-token-0123456789abcdef";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const CLI = resolve("dist/src/cli/main.js");
const { serve, cleanups } = servedGateways(TOKEN);

/** A second `sessiond serve` on `dir`, on `port`: its exit code and everything it printed. */
function serveAgain(dir: string, port: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--port", port, "--config", join(dir, "sessiond.yaml")],
    {
      cwd: dir,
      env: { ...process.env, SESSIOND_TOKEN: TOKEN, SESSIOND_DATA_DIR: dir, SESSIOND_CONFIG: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  cleanups.push(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise((done) => child.once("exit", (code) => done({ code, output })));
}

describe("one gateway per data dir", () => {
  it("a second serve on a live data dir exits at once, naming the running one, and touches nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-serve-lock-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const model = await startHeldModel();
    cleanups.push(() => model.close());
    const { asked } = model;
    writeModelConfig(dir, model.server);

    const a = serve(dir);
    const url = await a.listening();
    // A slow turn running and one input queued behind it.
    const turns: Promise<Response>[] = [];
    for (const message of ["slow one", "queued one"]) {
      turns.push(
        fetch(`${url}/api/chat`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ message, session_id: "admin-slow2" }),
        }),
      );
      if (message === "slow one") await model.firstAsked;
    }

    // The same port, as a user who runs it twice would.
    const port = new URL(url).port;
    const second = await serveAgain(dir, port);
    expect(second.code).not.toBe(0);
    expect(second.output).toContain("DATA_DIR_IN_USE");
    expect(second.output).toContain(`PID ${a.child.pid}`);
    expect(second.output).toContain(url);
    expect(second.output).not.toContain("recovered inputs");
    expect(second.output).not.toMatch(/\n\s+at /);
    expect(asked).toEqual(["slow one"]);

    // The live gateway goes on: each input is asked once, and no note says a restart cut anything off.
    model.answerAtOnce();
    model.release({ content: "slow reply" });
    const replies = await Promise.all(turns);
    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(asked).toEqual(["slow one", "queued one"]);
    a.child.kill("SIGTERM");
    await new Promise((r) => a.child.once("exit", r));

    const store = await openStore({ backend: "sqlite", path: join(dir, "sessiond.db") });
    try {
      const page = await store.listSessions({});
      const session = page.sessions.find((s) => s.key.endsWith("admin-slow2"));
      expect(session).toBeDefined();
      const entries = await store.readEntries(session!.id, {});
      expect(entries.filter((e) => e.type === "note")).toEqual([]);
      expect(entries.filter((e) => e.type === "message" && e.role === "user")).toHaveLength(2);
    } finally {
      await store.close();
    }
  });

  it("a gateway killed with SIGKILL leaves no lock behind: the next serve on its data dir starts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-serve-lock-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "sessiond.yaml"), "titles: { enabled: false }\n");
    const a = serve(dir);
    await a.listening();
    const killed = new Promise((r) => a.child.once("exit", r));
    a.child.kill("SIGKILL");
    await killed;
    const b = serve(dir);
    const url = await b.listening();
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
  });
});
