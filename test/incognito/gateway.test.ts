import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../gateway/ws/helpers.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { type ServedGateway, servedGateways } from "../support/serve-child.js";
import { useTempDirs } from "../support/temp-dirs.js";
import { fileCount, filesHolding, tablesHolding, uniqueMarker } from "./scan.js";

// Needs the build (dist/): the gateway runs as `sessiond serve` in a child process.
const TOKEN = "incognito-test-token-0123456789";
const tempDir = useTempDirs();
const { serve } = servedGateways(TOKEN);
const auth = { authorization: `Bearer ${TOKEN}` };

let cluster: PostgresCluster | undefined;
beforeAll(async () => {
  cluster = await startPostgres();
}, 60_000);
afterAll(() => cluster?.remove());

type Backend = "sqlite" | "jsonl" | "postgres";

async function post(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { headers: auth });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function stop(gateway: ServedGateway): Promise<void> {
  const exited = new Promise((resolve) => gateway.child.once("exit", resolve));
  gateway.child.kill("SIGTERM");
  await exited;
}

/** The turn an asynchronous request started, once it ended. */
async function finished(base: string, id: string): Promise<Record<string, unknown>> {
  for (;;) {
    const { body } = await get(`${base}/api/turns/${id}`);
    if (body.state !== "queued" && body.state !== "running") return body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each<Backend>(["sqlite", "jsonl", "postgres"])(
  "incognito sessions through `serve` on %s",
  (backend) => {
    it("REST, async, WebSocket, OpenAI and a config rule: nothing on disk, out of search and export, gone at restart", async () => {
      const dir = tempDir("sessiond-incognito-serve-");
      const url = backend === "postgres" ? await (cluster as PostgresCluster).createDatabase() : undefined;
      const store =
        backend === "sqlite"
          ? ""
          : backend === "jsonl"
            ? "store: { backend: jsonl }\n"
            : `store: { backend: postgres, url: "${url}" }\n`;
      writeFileSync(
        join(dir, "sessiond.yaml"),
        `${store}session:\n  incognito_for:\n    - channel: app_api\n`,
      );
      const stored = uniqueMarker();
      const secret = uniqueMarker();
      // The session's name too: not even the key of an incognito session is written anywhere.
      const name = `admin-${uniqueMarker()}`;
      const holders = async () => [
        ...filesHolding(dir, secret),
        ...filesHolding(dir, name),
        ...(url ? [...(await tablesHolding(url, secret)), ...(await tablesHolding(url, name))] : []),
      ];

      let gateway = serve(dir);
      let base = await gateway.listening();
      expect(
        (await post(`${base}/api/chat`, { message: `keep ${stored}`, session_id: "admin-kept" })).status,
      ).toBe(200);
      const chat = await post(`${base}/api/chat`, {
        message: `whisper ${secret}`,
        session_id: name,
        incognito: true,
      });
      expect(chat.status).toBe(200);
      expect(String(chat.body.reply)).toContain(secret);
      const started = await post(`${base}/api/chat?async=1`, {
        message: `later ${secret}`,
        session_id: "admin-async",
        incognito: true,
      });
      expect(started.status).toBe(202);
      expect((await finished(base, String(started.body.id))).state).toBe("done");
      const ws = await Client.open(`${base.replace("http", "ws")}/ws`, auth);
      const sent = await ws.call("chat.send", { message: `socket ${secret}`, incognito: true });
      await ws.close();
      const openai = await post(`${base}/v1/chat/completions`, {
        messages: [{ role: "user", content: `openai ${secret}` }],
        user: "private",
        incognito: true,
      });
      expect(openai.status).toBe(200);
      // No flag: the config's rule makes every App API session incognito.
      expect((await post(`${base}/api/app/alice`, { message: `app ${secret}` })).status).toBe(200);
      const refused = await post(`${base}/api/chat`, {
        message: `refused ${secret}`,
        session_id: "admin-kept",
        incognito: true,
      });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ error: { code: "KEY_TAKEN" } });

      const listed = (await get(`${base}/api/sessions?limit=100`)).body.sessions as Array<
        Record<string, unknown>
      >;
      const incognitoKeys = listed.filter((s) => s.incognito === true).map((s) => s.key);
      expect(incognitoKeys.sort()).toEqual(
        [name, "admin-async", String(sent.key), "openai-compat:127.0.0.1:private", "app_api:alice"].sort(),
      );
      expect(listed.find((s) => s.key === "admin-kept")?.incognito).toBeUndefined();
      const history = await get(`${base}/api/sessions/${name}/history`);
      expect(JSON.stringify(history.body)).toContain(secret);
      const search = await get(`${base}/api/search?q=${secret}`);
      if (search.status === 200) {
        expect(search.body.hits).toEqual([]);
        expect(((await get(`${base}/api/search?q=${stored}`)).body.hits as unknown[]).length).toBeGreaterThan(
          0,
        );
      }
      expect((await get(`${base}/api/sessions?q=whisper`)).body.sessions).toEqual([]);
      const exported = await get(`${base}/api/sessions/${name}/export?format=md`);
      expect(exported.status).toBe(409);
      expect(exported.body).toMatchObject({ error: { code: "SESSION_INCOGNITO" } });

      // Every byte of the data dir while the gateway runs (SQLite's -wal and -shm are there now), and its rows.
      expect([...filesHolding(dir, stored), ...(url ? await tablesHolding(url, stored) : [])]).not.toEqual(
        [],
      );
      expect(await holders()).toEqual([]);
      await stop(gateway);
      if (!url) expect(fileCount(dir)).toBeGreaterThan(1);
      expect(await holders()).toEqual([]);
      expect(gateway.output.text).not.toContain(secret);

      gateway = serve(dir);
      base = await gateway.listening();
      expect((await get(`${base}/api/sessions/${name}`)).status).toBe(404);
      expect((await get(`${base}/api/sessions/app_api:alice`)).status).toBe(404);
      const after = (await get(`${base}/api/sessions?limit=100`)).body.sessions as Array<
        Record<string, unknown>
      >;
      expect(after.map((s) => s.key)).toEqual(["admin-kept"]);
      await stop(gateway);
      expect(await holders()).toEqual([]);
    });
  },
);
