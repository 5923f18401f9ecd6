import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { json, startTestGateway, type TestGateway, TOKEN } from "./helpers.js";

const init = { agent: "main", channel: "telegram", createdBy: "test" };

describe("GET /api/search and WS sessions.search (SQLite store)", () => {
  let gw: TestGateway;
  const dir = mkdtempSync(join(tmpdir(), "sessiond-search-gw-"));
  beforeAll(async () => {
    gw = await startTestGateway({ store: { backend: "sqlite", path: join(dir, "sessiond.db") } });
    await gw.engine.store.append(
      "telegram:1",
      [{ type: "message", role: "user", content: "where is the <b>kiwi</b>?" }],
      { init },
    );
    await gw.engine.store.append(
      "slack:2",
      [{ type: "message", role: "assistant", content: "the kiwi is a bird" }],
      {
        init: { ...init, channel: "slack" },
      },
    );
  });
  afterAll(async () => {
    await gw.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers hits with escaped, marked snippets, filters and a cursor", async () => {
    const res = await gw.api("/api/search?q=kiwi&limit=1");
    expect(res.status).toBe(200);
    const body = (await res.json()) as unknown as {
      hits: Array<{ key: string; snippet: string; seq: number }>;
      nextCursor?: string;
      indexing: boolean;
    };
    expect(body.hits).toHaveLength(1);
    expect(body.indexing).toBe(false);
    const next = (await (
      await gw.api(`/api/search?q=kiwi&limit=1&cursor=${body.nextCursor}`)
    ).json()) as unknown as typeof body;
    const snippets = [...body.hits, ...next.hits].map((h) => h.snippet).sort();
    expect(snippets).toEqual([
      "the <mark>kiwi</mark> is a bird",
      "where is the &lt;b&gt;<mark>kiwi</mark>&lt;/b&gt;?",
    ]);
    expect(next.nextCursor).toBeUndefined();
    const filtered = (await (
      await gw.api("/api/search?q=kiwi&channel=slack&role=assistant&prefix=slack:")
    ).json()) as unknown as typeof body;
    expect(filtered.hits.map((h) => h.key)).toEqual(["slack:2"]);
  });

  it("refuses bad input with 400 INVALID_ARGUMENT and needs the token", async () => {
    for (const q of [
      "",
      "q=%20",
      "q=kiwi&limit=0",
      "q=kiwi&since=yesterday",
      "q=kiwi&archived=maybe",
      "q=kiwi&cursor=x",
    ]) {
      const res = await gw.api(`/api/search?${q}`);
      expect(res.status, q).toBe(400);
      expect((await json(res)).error?.code).toBe("INVALID_ARGUMENT");
    }
    expect((await fetch(`${gw.url}/api/search?q=kiwi`)).status).toBe(401);
  });

  it("answers sessions.search over the WebSocket", async () => {
    const socket = new WebSocket(`${gw.url.replace("http", "ws")}/ws?token=${TOKEN}&channel=web`);
    const reply = new Promise<{ ok: boolean; result: { hits: Array<{ key: string }> } }>((resolve) => {
      socket.on("message", (data) => {
        const frame = JSON.parse(String(data)) as {
          type: string;
          id?: string;
          ok: boolean;
          result: { hits: Array<{ key: string }> };
        };
        if (frame.type === "res" && frame.id === "s") resolve(frame);
      });
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    socket.send(
      JSON.stringify({
        type: "req",
        id: "s",
        method: "sessions.search",
        params: { q: "kiwi", channel: "telegram" },
      }),
    );
    const res = await reply;
    expect(res.ok).toBe(true);
    expect(res.result.hits.map((h) => h.key)).toEqual(["telegram:1"]);
    socket.close();
  });
});

describe("GET /api/search on a JSONL store", () => {
  it("answers hits from the store's sidecar index", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-search-jsonl-"));
    const gw = await startTestGateway({ store: { backend: "jsonl", path: dir } });
    try {
      await gw.engine.store.append(
        "telegram:1",
        [{ type: "message", role: "user", content: "where is the <b>kiwi</b>?" }],
        { init },
      );
      const res = await gw.api("/api/search?q=kiwi");
      expect(res.status).toBe(200);
      const body = (await json(res)) as unknown as {
        hits: Array<{ key: string; snippet: string }>;
        indexing: boolean;
      };
      expect(body.hits.map((h) => [h.key, h.snippet])).toEqual([
        ["telegram:1", "where is the &lt;b&gt;<mark>kiwi</mark>&lt;/b&gt;?"],
      ]);
      expect(body.indexing).toBe(false);
    } finally {
      await gw.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a store without a search index", () => {
  it("answers 501 SEARCH_UNAVAILABLE", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-search-jsonl-"));
    const gw = await startTestGateway({ store: { backend: "jsonl", path: dir, searchIndex: false } });
    try {
      const res = await gw.api("/api/search?q=kiwi");
      expect(res.status).toBe(501);
      expect((await json(res)).error?.code).toBe("SEARCH_UNAVAILABLE");
    } finally {
      await gw.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
