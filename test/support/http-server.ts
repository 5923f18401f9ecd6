import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll } from "vitest";

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The JSON body parsed, the raw text when it is not JSON, undefined when empty. */
  body: unknown;
}

export type Route = (request: RecordedRequest, res: ServerResponse) => Promise<void> | void;

export interface LocalServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/**
 * A node:http server on 127.0.0.1 and a free port that records every request before routing it.
 * `close()` also drops connections still waiting on a delayed reply.
 */
export async function startLocalServer(route: Route): Promise<LocalServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        path: url.pathname,
        headers: req.headers,
        body: await readBody(req),
      };
      requests.push(recorded);
      await route(recorded, res);
    })().catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error) } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Starts a local server once for the enclosing `describe` (or file), closes it afterwards, and forgets
 * its recorded requests (and, with `reset`, anything else) after every test. Returns a stand-in that
 * forwards to the running server, so tests use it like the server itself.
 */
export function useServer<S extends { close(): Promise<void>; requests: unknown[] }>(
  start: () => Promise<S>,
  reset?: (server: S) => void,
): S {
  let current: S | undefined;
  beforeAll(async () => {
    current = await start();
  });
  afterAll(async () => {
    await current?.close();
  });
  afterEach(() => {
    if (!current) return;
    current.requests.length = 0;
    reset?.(current);
  });
  return new Proxy({} as S, {
    get(_target, name) {
      if (!current) throw new Error("the local server is used before it started");
      const value: unknown = Reflect.get(current, name);
      return typeof value === "function" ? value.bind(current) : value;
    },
  });
}
