import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { resolveToken } from "../../../src/gateway/token.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";
import { postJson } from "./helpers.js";

const CLI = resolve("dist/src/cli/main.js");
const run = promisify(execFile);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function listening(child: ChildProcess): Promise<string> {
  let text = "";
  return new Promise((resolvePromise, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (match) resolvePromise(match[1]!);
    });
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${text}`)));
  });
}

describe("the CLI while the gateway runs, on one SQLite file", () => {
  it("appends from `sessiond sessions append` and the gateway's turns to one session: all stored, seqs gap-free", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-serve-cli-"));
    dirs.push(dir);
    const env = { ...process.env, SESSIOND_DATA_DIR: dir, SESSIOND_TOKEN: "", SESSIOND_CONFIG: "" };
    const gateway = spawn(process.execPath, [CLI, "serve", "--port", "0"], {
      cwd: dir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const url = await listening(gateway);
      const token = resolveToken(dir, {}).token;
      const chat = (i: number) =>
        fetch(`${url}/api/chat`, postJson({ message: `turn ${i}` }, { authorization: `Bearer ${token}` }));
      expect((await chat(0)).status).toBe(200);
      const turns = Array.from({ length: 12 }, (_, i) => chat(i + 1));
      const appends = Array.from({ length: 4 }, (_, i) =>
        run(process.execPath, [CLI, "sessions", "append", "admin-session", `from the cli ${i}`], {
          cwd: dir,
          env,
        }),
      );
      for (const response of await Promise.all(turns)) expect(response.status).toBe(200);
      await Promise.all(appends);
      const exited = new Promise((r) => gateway.on("exit", r));
      gateway.kill("SIGTERM");
      await exited;
    } finally {
      if (gateway.exitCode === null) gateway.kill("SIGKILL");
    }
    const store = new SqliteStore({ path: join(dir, "sessiond.db") });
    try {
      const session = (await store.getSession("admin-session"))!;
      const entries = await store.readEntries(session.id);
      expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
      const texts = entries.flatMap((e) => (e.type === "message" && e.role === "user" ? [e.content] : []));
      expect(texts.filter((t) => t.startsWith("turn "))).toHaveLength(13);
      expect(texts.filter((t) => t.startsWith("from the cli "))).toHaveLength(4);
      expect(entries.filter((e) => e.type === "message" && e.role === "assistant")).toHaveLength(13);
    } finally {
      await store.close();
    }
  });
});
