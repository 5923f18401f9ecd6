import type { ServerResponse } from "node:http";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RecordedRequest, startLocalServer } from "../support/http-server.js";
import { type ChannelGateway, sendJson, startChannelGateway, transcript } from "./support.js";

const APP_ID = "app-0000-1111";
const issuer = await generateKeyPair("RS256");
const stranger = await generateKeyPair("RS256");
const jwk = { ...(await exportJWK(issuer.publicKey)), kid: "k1", alg: "RS256", use: "sig" };

describe("msteams (Bot Framework)", () => {
  let gw: ChannelGateway;
  let connector: Awaited<ReturnType<typeof startLocalServer>>;
  const failures: Array<(res: ServerResponse) => void> = [];
  const replies: RecordedRequest[] = [];

  beforeEach(async () => {
    connector = await startLocalServer((request, res) => {
      if (request.path === "/openid") return sendJson(res, 200, { jwks_uri: `${connector.origin}/keys` });
      if (request.path === "/keys") return sendJson(res, 200, { keys: [jwk] });
      if (request.path === "/token")
        return sendJson(res, 200, { access_token: "app-token", expires_in: 3600 });
      if (request.method === "POST" && request.path.startsWith("/v3/conversations/")) {
        const fail = failures.shift();
        if (fail) return fail(res);
        replies.push(request);
        return sendJson(res, 200, { id: "reply-1" });
      }
      sendJson(res, 404, {});
    });
    gw = await startChannelGateway(
      {
        msteams: {
          app_id: APP_ID,
          app_password_env: "TEAMS_PASSWORD",
          openid_url: `${connector.origin}/openid`,
          token_url: `${connector.origin}/token`,
        },
      },
      { TEAMS_PASSWORD: "app-password" },
    );
  });
  afterEach(async () => {
    await gw.stop();
    await connector.close();
    failures.length = 0;
    replies.length = 0;
  });

  const jwt = (
    claims: { aud?: string; serviceurl?: string | null; exp?: boolean } = {},
    key = issuer.privateKey,
  ) => {
    const token = new SignJWT(
      claims.serviceurl === null ? {} : { serviceurl: claims.serviceurl ?? connector.origin },
    )
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer("https://api.botframework.com")
      .setAudience(claims.aud ?? APP_ID)
      .setIssuedAt();
    return (claims.exp === false ? token : token.setExpirationTime("5m")).sign(key);
  };

  const activity = (
    id: string,
    text: string,
    kind: "personal" | "groupChat",
    extra: Record<string, unknown> = {},
  ) => ({
    type: "message",
    id,
    serviceUrl: connector.origin,
    channelId: "msteams",
    from: { id: "29:ann", name: "Ann" },
    recipient: { id: "28:bot", name: "sessiond" },
    conversation: { id: kind === "personal" ? "a:1on1" : "19:group@thread.v2", conversationType: kind },
    text,
    ...extra,
  });

  const post = async (body: unknown, token: string | null) =>
    fetch(gw.at("/channels/msteams/messages"), {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });

  it("answers a 1:1 message as a reply to its activity, keyed msteams:<conversationId>", async () => {
    expect((await post(activity("m1", "hello", "personal"), await jwt())).status).toBe(202);
    await gw.channels.idle();
    expect(transcript(await gw.entries("msteams:a:1on1"))).toEqual(["user: hello", "assistant: re: hello"]);
    expect(replies[0]?.path).toBe("/v3/conversations/a%3A1on1/activities/m1");
    expect(replies[0]?.headers.authorization).toBe("Bearer app-token");
    expect(replies[0]?.body).toMatchObject({ type: "message", text: "re: hello", replyToId: "m1" });
    const token = connector.requests.find((r) => r.path === "/token");
    expect(String(token?.body)).toContain("grant_type=client_credentials");
  });

  it("refuses a missing, foreign, mis-addressed or wrong-service token with 401, storing nothing", async () => {
    const message = activity("m2", "x", "personal");
    expect((await post(message, null)).status).toBe(401);
    expect((await post(message, await jwt({}, stranger.privateKey))).status).toBe(401);
    expect((await post(message, await jwt({ aud: "another-app" }))).status).toBe(401);
    expect((await post(message, await jwt({ serviceurl: "http://127.0.0.1:1" }))).status).toBe(401);
    // As the Bot Framework SDK: a token without serviceurl, or without exp (it would never expire), is refused.
    expect((await post(message, await jwt({ serviceurl: null }))).status).toBe(401);
    expect((await post(message, await jwt({ exp: false }))).status).toBe(401);
    await gw.channels.idle();
    expect((await gw.engine.sessions.list()).sessions).toEqual([]);
  });

  it("stores an unmentioned group message as context and answers the next mention, once", async () => {
    const token = await jwt();
    await post(activity("g1", "lunch at 12", "groupChat"), token);
    const mention = {
      entities: [{ type: "mention", mentioned: { id: "28:bot" }, text: "<at>sessiond</at>" }],
    };
    await post(activity("g2", "<at>sessiond</at> when is lunch?", "groupChat", mention), token);
    await post(activity("g2", "<at>sessiond</at> when is lunch?", "groupChat", mention), token);
    await gw.channels.idle();
    expect(transcript(await gw.entries("msteams:19:group@thread.v2"))).toEqual([
      "user: lunch at 12",
      "user: <at>sessiond</at> when is lunch?",
      "assistant: re: <at>sessiond</at> when is lunch?",
    ]);
    expect(replies).toHaveLength(1);
  });

  it("retries the reply on 429 after Retry-After", async () => {
    failures.push((res) => sendJson(res, 429, {}, { "retry-after": "2" }));
    await post(activity("r1", "hi", "personal"), await jwt());
    await gw.channels.idle();
    expect(gw.waits).toEqual([2000]);
    expect(replies).toHaveLength(1);
  });
});
