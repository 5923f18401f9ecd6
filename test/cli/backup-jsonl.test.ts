import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Entry } from "../../src/model/entry.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { type ServedGateway, serveGateway } from "../support/serve-child.js";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();
const served: ServedGateway[] = [];
afterEach(() => {
  for (const s of served.splice(0)) s.kill();
});

const CONFIG = "store: { backend: jsonl, path: sessions }\nagents:\n  - id: main\n";
const TOKEN = "jsonl-backup-test-token-0123456789abcdef";
const CLIENTS = 6;

/** Every line of every file a JSONL store keeps parses: none was cut in the middle. */
function wholeLines(dir: string): number {
  let lines = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith(".jsonl")) {
        const text = readFileSync(path, "utf8");
        expect({ path, endsWithNewline: text.endsWith("\n") }).toEqual({ path, endsWithNewline: true });
        for (const line of text.split("\n").slice(0, -1)) {
          expect(() => JSON.parse(line), `${path}: ${line.slice(0, 80)}`).not.toThrow();
          lines++;
        }
      }
    }
  };
  walk(dir);
  return lines;
}

describe("sessiond backup and restore (JSONL), while a gateway writes", () => {
  it("copies the store at one instant: every session gap-free, every input answered before it whole", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.yaml"), CONFIG);
    const gateway = serveGateway(dir, TOKEN);
    served.push(gateway);
    const url = await gateway.listening();
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const chat = async (message: string, session: string) => {
      const response = await fetch(`${url}/api/chat`, {
        method: "POST",
        headers,
        body: JSON.stringify({ message, session_id: session }),
      });
      expect(response.status).toBe(200);
    };
    /** Inputs in the order their turns were answered, and deletions answered. */
    const answered: string[] = [];
    const deleted: string[] = [];
    let stop = false;
    const client = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const message = `client ${n} message ${i}`;
        // Each client its own session, and every third message to one they share.
        await chat(message, i % 3 === 2 ? "admin-shared" : `admin-c${n}`);
        answered.push(message);
        if (n === 0 && i % 4 === 3) {
          // Sessions created and deleted: a delete unlinks a file the snapshot may hold.
          const temp = `admin-temp-${i}`;
          await chat(`short-lived ${i}`, temp);
          const key = (await (await fetch(`${url}/api/sessions?limit=1000`, { headers })).json()) as {
            sessions: Array<{ key: string }>;
          };
          const found = key.sessions.find((s) => s.key.endsWith(temp));
          if (found) {
            const gone = await fetch(`${url}/api/sessions/${encodeURIComponent(found.key)}`, {
              method: "DELETE",
              headers,
            });
            expect(gone.status).toBe(200);
            deleted.push(`short-lived ${i}`);
          }
        }
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, n) => client(n));
    while (answered.length < 60) await new Promise((r) => setTimeout(r, 20));

    // What was answered before the backup started must be in it, whole. The writes must go on while the
    // copy is taken (otherwise this proves little): on a loaded machine a backup may finish before any
    // answer comes, and is then taken again.
    let before: string[] = [];
    let deletedBefore: string[] = [];
    let backup: Awaited<ReturnType<typeof cli>> | undefined;
    let during = 0;
    for (let attempt = 0; attempt < 5 && during === 0; attempt++) {
      before = [...answered];
      deletedBefore = [...deleted];
      backup = await cli(dir, ["--data-dir", dir, "backup", "store.tar.gz"], {
        env: { SESSIOND_TOKEN: TOKEN },
      });
      during = answered.length - before.length;
    }
    stop = true;
    await Promise.all(clients);
    if (!backup) throw new Error("no backup was taken");
    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);
    expect(backup.stdout).toMatch(
      new RegExp(
        `^backed up .*sessions to .*store\\.tar\\.gz \\(\\d+ files as of [\\dT:.Z-]+; taken by the gateway at ${url.replace(/[.:/]/g, "\\$&")}\\)\\n$`,
      ),
    );
    expect(readdirSync(dir).filter((n) => n.includes(".partial"))).toEqual([]);
    expect(readdirSync(join(dir, "sessions", ".sessiond")).filter((n) => n.startsWith("backup-"))).toEqual(
      [],
    );

    // A restore while the gateway runs would pull the directory from under it: refused, nothing changed.
    const refused = await cli(dir, ["--data-dir", dir, "restore", "store.tar.gz"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `error: a gateway is running on ${dir}: stop it first, then restore (nothing was changed)\n`,
    );

    const fresh = tempDir();
    writeFileSync(join(fresh, "sessiond.yaml"), CONFIG);
    const restored = await cli(fresh, ["--data-dir", fresh, "restore", join(dir, "store.tar.gz")]);
    expect(restored.stderr).toBe("");
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(/^restored .*sessions from .*store\.tar\.gz \(\d+ files as of .*\)\n$/);
    expect(wholeLines(join(fresh, "sessions"))).toBeGreaterThan(0);

    const problems: string[] = [];
    const store = new JsonlStore({
      path: join(fresh, "sessions"),
      searchIndex: false,
      onProblem: (p) => problems.push(`${p.file}:${p.line} ${p.reason}`),
    });
    try {
      const { sessions } = await store.listSessions({ includeArchived: true, limit: 1000 });
      const inputs = new Map<string, { entries: Entry[]; at: number }>();
      for (const session of sessions) {
        const entries = await store.readEntries(session.id);
        // Gap-free: a prefix of the session's log, never a hole.
        expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
        entries.forEach((e, at) => {
          if (e.type === "message" && e.role === "user") inputs.set(e.content, { entries, at });
        });
      }
      for (const message of before) {
        const found = inputs.get(message);
        expect(found, message).toBeDefined();
        // Its turn is whole: the reply follows the input.
        const reply = found?.entries.slice((found?.at ?? 0) + 1).find((e) => e.type === "message");
        expect(reply && reply.type === "message" && reply.role, message).toBe("assistant");
      }
      for (const gone of deletedBefore) expect(inputs.has(gone), gone).toBe(false);
      expect(problems).toEqual([]);
    } finally {
      await store.close();
    }
    expect(during).toBeGreaterThan(0);
  });

  it("refuses a file that is not a backup with one line, and changes nothing", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.yaml"), CONFIG);
    writeFileSync(join(dir, "bad.tar.gz"), "not an archive");
    const result = await cli(dir, ["--data-dir", dir, "restore", "bad.tar.gz"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: .*bad\.tar\.gz is not a whole sessiond JSONL backup: .*\n$/);
    expect(existsSync(join(dir, "sessions"))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(["bad.tar.gz", "sessiond.yaml"]);
  });

  it("with no gateway running, opens the store itself; a wrong token is told in one line", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.yaml"), CONFIG);
    await seed(
      dir,
      async (engine) => {
        await engine.append("web:a", [{ type: "message", role: "user", content: "kept" }]);
      },
      { store: { backend: "jsonl", path: join(dir, "sessions") } },
    );
    const offline = await cli(dir, ["--data-dir", dir, "backup", "offline.tar.gz"]);
    expect(offline.stderr).toBe("");
    expect(offline.stdout).toMatch(/ \(\d+ files as of .*; no gateway was running\)\n$/);
    const fresh = tempDir();
    writeFileSync(join(fresh, "sessiond.yaml"), CONFIG);
    const restored = await cli(fresh, ["--data-dir", fresh, "restore", join(dir, "offline.tar.gz")]);
    expect(restored.code).toBe(0);
    const list = await cli(fresh, ["--data-dir", fresh, "sessions", "list", "--json"]);
    expect(JSON.parse(list.stdout).sessions.map((s: { key: string }) => s.key)).toEqual(["web:a"]);

    const gateway = serveGateway(dir, TOKEN);
    served.push(gateway);
    const url = await gateway.listening();
    const wrong = await cli(dir, ["--data-dir", dir, "backup", "x.tar.gz"], {
      env: { SESSIOND_TOKEN: "wrong" },
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(
      new RegExp(`^error: the gateway at ${url.replace(/[.:/]/g, "\\$&")} answered 401: .*\n$`),
    );
    expect(existsSync(join(dir, "x.tar.gz"))).toBe(false);
    expect(readdirSync(dir).filter((n) => n.includes(".partial"))).toEqual([]);
  });

  it("a download given up releases its snapshot, and one copy is taken at a time", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.yaml"), CONFIG);
    // 24 MB that gzip cannot shrink: more than the sockets buffer, so the copy waits for its reader.
    await seed(
      dir,
      async (engine) => {
        for (let i = 0; i < 24; i++) {
          const content = randomBytes(768 * 1024).toString("base64");
          await engine.append(`web:big-${i}`, [{ type: "message", role: "user", content }]);
        }
      },
      { store: { backend: "jsonl", path: join(dir, "sessions") } },
    );
    const gateway = serveGateway(dir, TOKEN);
    served.push(gateway);
    const url = await gateway.listening();
    const snapshots = () =>
      readdirSync(join(dir, "sessions", ".sessiond")).filter((n) => n.startsWith("backup-"));
    const abort = new AbortController();
    const first = await fetch(`${url}/api/store/backup`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      signal: abort.signal,
    });
    expect(first.status).toBe(200);
    expect(snapshots()).toHaveLength(1);
    const second = await fetch(`${url}/api/store/backup`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(second.status).toBe(503);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe("STORE_BUSY");
    abort.abort();
    await expect.poll(snapshots, { timeout: 20_000, interval: 50 }).toEqual([]);
    const after = await cli(dir, ["--data-dir", dir, "backup", "after.tar.gz"], {
      env: { SESSIOND_TOKEN: TOKEN },
    });
    expect({ code: after.code, stderr: after.stderr }).toEqual({ code: 0, stderr: "" });
  });
});
