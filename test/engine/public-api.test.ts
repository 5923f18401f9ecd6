import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/index.js";
import { MemoryStore, SqliteStore } from "../../src/public/store.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** What `import(specifier)` of the built package gives, by name (the package imports itself by name). */
async function exportsOf(specifiers: string[]): Promise<Record<string, string[]>> {
  const script = `
    const out = {};
    for (const s of ${JSON.stringify(specifiers)}) out[s] = Object.keys(await import(s)).sort();
    console.log(JSON.stringify(out));`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
    cwd: ROOT,
  });
  return JSON.parse(stdout) as Record<string, string[]>;
}

describe("the package's entry points", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    exports: Record<string, unknown>;
  };
  const subpaths = Object.keys(manifest.exports).filter((p) => p !== "." && p !== "./package.json");

  it("the root holds the engine and its error, nothing of the layers below", async () => {
    const { sessiond } = await exportsOf(["sessiond"]);
    expect(sessiond).toEqual(["SessiondError", "createEngine", "isSessiondError"]);
  });

  it("every subpath in exports loads from the build, with its types beside it", async () => {
    expect(subpaths).toEqual(expect.arrayContaining(["./store", "./keys", "./gateway", "./runtimes"]));
    const loaded = await exportsOf(subpaths.map((p) => `sessiond/${p.slice(2)}`));
    for (const path of subpaths) {
      expect(loaded[`sessiond/${path.slice(2)}`]?.length, path).toBeGreaterThan(0);
      const target = manifest.exports[path] as { types: string; import: string };
      expect(() => readFileSync(join(ROOT, target.types)), target.types).not.toThrow();
    }
    expect(loaded["sessiond/store"]).toEqual([
      "JsonlStore",
      "LogStore",
      "MemoryDriver",
      "MemoryStore",
      "SqliteStore",
      "openStore",
    ]);
    expect(loaded["sessiond/store/testing"]).toEqual(["answerOf", "faultInit", "runStoreContract"]);
    expect(loaded["sessiond/keys"]).toContain("routeEnvelope");
    expect(loaded["sessiond/gateway"]).toContain("startGateway");
  });
});

describe("engine options and ownership", () => {
  let dir: string;
  let engine: Engine | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-api-"));
  });

  afterEach(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("close() leaves a store the caller passed in open, and closes one it opened", async () => {
    const store = new SqliteStore({ path: join(dir, "mine.db") });
    try {
      engine = await createEngine({ dataDir: dir, store, titles: { enabled: false } });
      await engine.append("telegram:1", [{ type: "message", role: "user", content: "hi" }]);
      await engine.close();
      const more = await store.append("telegram:1", [
        { type: "message", role: "user", content: "still open" },
      ]);
      expect(more.session.entryCount).toBe(2);
    } finally {
      await store.close();
    }

    engine = await createEngine({ dataDir: dir, titles: { enabled: false } });
    const own = engine.store;
    await engine.close();
    engine = undefined;
    await expect(own.getSession("telegram:1")).rejects.toMatchObject({ code: "STORE_CLOSED" });
  });

  it("append passes the store's own options through (durability)", async () => {
    const memory = new MemoryStore();
    const seen: Array<string | undefined> = [];
    const recording = new Proxy(memory, {
      get(target, name, receiver) {
        if (name === "append") {
          return (...args: Parameters<MemoryStore["append"]>) => {
            seen.push(args[2]?.durability);
            return target.append(...args);
          };
        }
        const value = Reflect.get(target, name, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    engine = await createEngine({ dataDir: dir, store: recording, titles: { enabled: false } });
    await engine.append("custom-key", [{ type: "note", text: "n" }], { durability: "relaxed" });
    expect(seen).toEqual(["relaxed"]);
    await engine.close();
    engine = undefined;
    await memory.close();
  });

  it("append takes an options object: the new session's init and the store's options", async () => {
    engine = await createEngine({ dataDir: dir, titles: { enabled: false } });
    const first = await engine.append("custom-key", [{ type: "message", role: "user", content: "a" }], {
      init: { agent: "main", channel: "cli", createdBy: "u1" },
    });
    expect(first.session).toMatchObject({ channel: "cli", createdBy: "u1" });
    await engine.reset("custom-key");
    await expect(
      engine.append("custom-key", [{ type: "message", role: "user", content: "b" }], {
        expectSessionId: first.session.id,
      }),
    ).rejects.toMatchObject({ code: "SESSION_CHANGED" });
  });
});
