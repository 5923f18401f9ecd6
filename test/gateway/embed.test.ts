import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { createGateway, type Gateway } from "../../src/gateway/index.js";
import { memoryLogger, TOKEN } from "./http/helpers.js";
import { Client } from "./ws/helpers.js";

interface Host {
  url: string;
  server: Server;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function engineForTest(): Promise<Engine> {
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-embed-"));
  const engine = await createEngine({
    dataDir,
    store: { backend: "memory" },
    titles: { enabled: false },
    lifecycle: { sweepIntervalMs: 0 },
  });
  cleanups.push(async () => {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return engine;
}

async function serve(app: Hono): Promise<Host> {
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function embedded(engine: Engine, websocketPath?: string): Gateway {
  const gateway = createGateway(engine, {
    token: TOKEN,
    logger: memoryLogger([]),
    webDir: false,
    ...(websocketPath ? { websocket: { path: websocketPath } } : {}),
  });
  cleanups.push(() => gateway.close());
  return gateway;
}

const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

describe("createGateway: the gateway embedded in another Hono app", () => {
  it("serves its API under a prefix of the host app, beside the host's own routes", async () => {
    const engine = await engineForTest();
    const gateway = embedded(engine);
    const host = new Hono();
    host.get("/own", (c) => c.text("the host's own route"));
    host.mount("/sessiond", gateway.fetch);
    const { url } = await serve(host);

    const own = await fetch(`${url}/own`);
    expect(await own.text()).toBe("the host's own route");
    expect((await fetch(`${url}/sessiond/health`)).status).toBe(200);
    expect((await fetch(`${url}/sessiond/api/sessions`)).status).toBe(401);

    const chat = await fetch(`${url}/sessiond/api/chat`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ message: "hello from the host" }),
    });
    expect(chat.status).toBe(200);
    const body = (await chat.json()) as { key: string; reply: string };
    expect(body.key).toBe("admin-session");
    expect(body.reply).toContain("hello from the host");
    const app = await fetch(`${url}/sessiond/api/app/bob/s1`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ message: "hi" }),
    });
    expect(((await app.json()) as { key: string }).key).toBe("app_api:bob/s1");
    const history = await engine.history("admin-session");
    expect(history.map((e) => e.type === "message" && e.role)).toEqual(["user", "assistant"]);
    // The web chat's runtime is offered tools; the echo still costs nothing, so nothing is priced.
    expect(await engine.agents.store.costOf("main", "admin-session", history[0]?.id ?? "")).toBeUndefined();
  });

  it("mounts at the root after the host's routes, and speaks WebSocket on the host's Node server", async () => {
    const engine = await engineForTest();
    const gateway = embedded(engine);
    const host = new Hono();
    host.get("/own", (c) => c.text("open"));
    host.route("/", gateway.app);
    const { url, server } = await serve(host);
    const websocket = gateway.attachWebSocket(server);
    cleanups.push(() => websocket.close());

    expect(await (await fetch(`${url}/own`)).text()).toBe("open");
    const sessions = await fetch(`${url}/api/sessions`, { headers: auth });
    expect(sessions.status).toBe(200);

    const client = await Client.open(`${url.replace("http", "ws")}/ws?token=${TOKEN}`);
    cleanups.push(() => client.socket.close());
    const answer = await client.request("chat.send", { message: "over the socket" });
    expect(answer.ok).toBe(true);
    expect(String(answer.result?.reply)).toContain("over the socket");
  });
});
