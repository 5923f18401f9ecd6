import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/model/session.js";
import { saveSnapshot } from "../../src/store/jsonl/index-snapshot.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";

const N = 100_000;
const dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-100k-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }), 120_000);

describe("a JSONL directory of 100,000 sessions", () => {
  it("opens from its index with one stat per file and lists without reading any file", async () => {
    // 100,000 real CrabTalk files, and the index a clean close would have left beside them (building it
    // from the files is covered on a smaller directory in jsonl-files.test.ts).
    mkdirSync(join(dir, ".sessiond", "meta"), { recursive: true });
    const records = [];
    for (let i = 0; i < N; i++) {
      const file = `crab_u${i}_1.jsonl`;
      const createdAt = 1_700_000_000_000 + i * 1000;
      const agent = i % 2 ? "crab" : "squid";
      writeFileSync(
        join(dir, file),
        `${JSON.stringify({ agent, created_by: `u${i}`, created_at: new Date(createdAt).toISOString(), title: "", uptime_secs: 0 })}\n${JSON.stringify({ role: "user", content: `hello ${i}` })}\n`,
      );
      const { size, mtimeMs } = statSync(join(dir, file));
      const session: Session = {
        id: `01${String(i).padStart(24, "0")}`,
        key: `${agent}:u${i}`,
        generation: 1,
        state: "active",
        agent,
        channel: "crabtalk",
        createdBy: `u${i}`,
        title: "",
        createdAt,
        lastActivityAt: createdAt,
        entryCount: 1,
        messageCount: 1,
        approxTokens: 2,
        contextFromSeq: 1,
        overrides: {},
      };
      records.push({ file, size, mtimeMs, foreign: true, session });
    }
    saveSnapshot(join(dir, ".sessiond", "index.json"), records);

    const store = new JsonlStore({ path: dir });
    expect(store.indexStats()).toEqual({ filesRead: 0, filesFromIndex: N });
    const page = await store.listSessions({ limit: 3, sort: "activity" });
    expect(page.sessions.map((s) => s.createdBy)).toEqual([`u${N - 1}`, `u${N - 2}`, `u${N - 3}`]);
    expect(page.sessions[0]).toMatchObject({ key: `crab:u${N - 1}`, messageCount: 1 });
    const squid = await store.listSessions({ agent: "squid", limit: 1000 });
    expect(squid.sessions).toHaveLength(1000);
    expect(squid.sessions.every((s) => s.agent === "squid")).toBe(true);
    const next = await store.listSessions({ agent: "squid", limit: 1000, cursor: squid.nextCursor });
    expect(next.sessions[0]!.createdAt).toBeLessThan(squid.sessions.at(-1)!.createdAt);
    // A session opened from the index still reads its file on demand.
    const context = (await store.loadContext("crab:u77"))!;
    expect(context.entries.map((e) => (e.type === "message" ? e.content : ""))).toEqual(["hello 77"]);
    await store.close();
  }, 300_000);
});
