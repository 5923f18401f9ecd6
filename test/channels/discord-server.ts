import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import { type RecordedRequest, startLocalServer } from "../support/http-server.js";
import { platformRoutes, sendJson } from "./support.js";

export const BOT_ID = "900";
export const APP_ID = "800";

/** An application key pair: the public key as Discord shows it (hex), and a signer for interactions. */
export function interactionKeys() {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  return { publicKeyHex: raw.toString("hex"), privateKey };
}

export function signedInteraction(
  body: unknown,
  privateKey: KeyObject,
  timestamp = String(Math.floor(Date.now() / 1000)),
): RequestInit {
  const text = JSON.stringify(body);
  const signature = sign(null, Buffer.from(timestamp + text), privateKey).toString("hex");
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-signature-ed25519": signature,
      "x-signature-timestamp": timestamp,
    },
    body: text,
  };
}

/**
 * A local Discord: REST (`GET /gateway/bot`, create message, interaction follow-ups, with scripted
 * failures) and a Gateway WebSocket that says HELLO, answers IDENTIFY with READY and dispatches events.
 */
export async function startDiscord() {
  const failures: Array<(res: ServerResponse) => void> = [];
  const sent: RecordedRequest[] = [];
  const identifies: unknown[] = [];
  const sockets = new Set<WebSocket>();
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  let seq = 0;
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  const gatewayUrl = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  wss.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 } }));
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { op: number; d: unknown };
      if (frame.op === 1) socket.send(JSON.stringify({ op: 11 }));
      if (frame.op !== 2) return;
      identifies.push(frame.d);
      socket.send(
        JSON.stringify({
          op: 0,
          t: "READY",
          s: ++seq,
          d: {
            v: 10,
            user: { id: BOT_ID, username: "sessiond", bot: true },
            session_id: "session-1",
            resume_gateway_url: gatewayUrl,
            guilds: [],
            shard: [0, 1],
            application: { id: APP_ID, flags: 0 },
          },
        }),
      );
    });
  });
  const deliver = (request: RecordedRequest, res: ServerResponse) => {
    const fail = failures.shift();
    if (fail) return fail(res);
    sent.push(request);
    wake();
    sendJson(res, 200, { id: String(5000 + sent.length) });
  };
  const rest = await startLocalServer(async (request, res) => {
    if (
      request.method === "POST" &&
      /^\/api\/v10\/(channels\/\d+\/messages|webhooks\/\d+\/[\w-]+)$/.test(request.path)
    ) {
      return deliver(request, res);
    }
    return platformRoutes({
      "GET /api/v10/gateway/bot": (_q, r) =>
        sendJson(r, 200, {
          url: gatewayUrl,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 },
        }),
    })(request, res);
  });
  return {
    api: `${rest.origin}/api`,
    requests: rest.requests,
    failures,
    sent,
    identifies,
    /** Sends a dispatch to every connected client. */
    dispatch(t: string, d: unknown) {
      for (const socket of sockets) socket.send(JSON.stringify({ op: 0, t, s: ++seq, d }));
    },
    async until(done: () => boolean) {
      while (!done()) await new Promise<void>((w) => waiters.push(w));
    },
    async close() {
      for (const socket of sockets) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await rest.close();
    },
  };
}
