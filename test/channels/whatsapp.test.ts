import { createHmac } from "node:crypto";
import type { ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RecordedRequest, startLocalServer } from "../support/http-server.js";
import {
  type ChannelGateway,
  whatsappNotification as notification,
  sendJson,
  startChannelGateway,
  transcript,
} from "./support.js";

const env = { WA_TOKEN: "wa-access-token", WA_SECRET: "wa-app-secret", WA_VERIFY: "verify-me" };

describe("whatsapp cloud", () => {
  let gw: ChannelGateway;
  let graph: Awaited<ReturnType<typeof startLocalServer>>;
  const failures: Array<(res: ServerResponse) => void> = [];
  const sent: RecordedRequest[] = [];

  beforeEach(async () => {
    graph = await startLocalServer((request, res) => {
      if (request.method !== "POST" || request.path !== "/v21.0/PN1/messages") return sendJson(res, 404, {});
      const fail = failures.shift();
      if (fail) return fail(res);
      sent.push(request);
      sendJson(res, 200, { messages: [{ id: "wamid.reply" }] });
    });
    gw = await startChannelGateway(
      {
        whatsapp: {
          token_env: "WA_TOKEN",
          app_secret_env: "WA_SECRET",
          verify_token_env: "WA_VERIFY",
          api_base_url: graph.origin,
        },
      },
      env,
    );
  });
  afterEach(async () => {
    await gw.stop();
    await graph.close();
    failures.length = 0;
    sent.length = 0;
  });

  const post = (body: unknown, secret: string | null = env.WA_SECRET) => {
    const text = JSON.stringify(body);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (secret)
      headers["x-hub-signature-256"] = `sha256=${createHmac("sha256", secret).update(text).digest("hex")}`;
    return fetch(gw.at("/channels/whatsapp"), { method: "POST", headers, body: text });
  };

  it("answers the hub.challenge only with the verify token", async () => {
    const ok = await fetch(
      gw.at("/channels/whatsapp?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=42"),
    );
    expect(await ok.text()).toBe("42");
    const bad = await fetch(
      gw.at("/channels/whatsapp?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=42"),
    );
    expect(bad.status).toBe(403);
  });

  it("answers a message through the Graph API, keyed whatsapp:<wa_id>, once when redelivered", async () => {
    await post(notification("wamid.1", "hola"));
    await post(notification("wamid.1", "hola"));
    await gw.channels.idle();
    expect(transcript(await gw.entries("whatsapp:4915112345"))).toEqual([
      "user: hola",
      "assistant: re: hola",
    ]);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.headers.authorization).toBe("Bearer wa-access-token");
    expect(sent[0]?.body).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "4915112345",
      type: "text",
      text: { body: "re: hola" },
      context: { message_id: "wamid.1" },
    });
  });

  it("refuses a bad or missing X-Hub-Signature-256 with 401 and stores nothing", async () => {
    expect((await post(notification("wamid.2", "x"), "other-secret")).status).toBe(401);
    expect((await post(notification("wamid.2", "x"), null)).status).toBe(401);
    expect((await gw.engine.sessions.list()).sessions).toEqual([]);
  });

  it("retries on 429 after Retry-After", async () => {
    failures.push((res) => sendJson(res, 429, { error: { message: "rate" } }, { "retry-after": "4" }));
    await post(notification("wamid.3", "again"));
    await gw.channels.idle();
    expect(gw.waits).toEqual([4000]);
    expect(sent).toHaveLength(1);
  });
});
