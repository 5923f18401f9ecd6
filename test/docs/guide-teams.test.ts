import { readFileSync } from "node:fs";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { sendJson } from "../channels/support.js";
import { within } from "../gateway/postgres/gateways.js";
import { type RecordedRequest, startLocalServer } from "../support/http-server.js";
import { useChatGuides } from "./guide-chat.js";

const { followSetup, sessionKeys, delivery } = useChatGuides();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const APP_ID = "00000000-0000-0000-0000-000000000000";
const TOKEN_PATH = "/your-tenant-id/oauth2/v2.0/token";

describe("docs/guides/teams.md, followed literally", () => {
  it("an activity the Bot Framework signed for the App ID is answered with a token asked for with the client secret", async () => {
    const signer = await generateKeyPair("RS256");
    const stranger = await generateKeyPair("RS256");
    const jwk = { ...(await exportJWK(signer.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    const tokenRequests: RecordedRequest[] = [];
    const { deliver, delivered } = delivery();
    const botFramework = await startLocalServer((request, res) => {
      if (request.path === "/openid") return sendJson(res, 200, { jwks_uri: `${botFramework.origin}/keys` });
      if (request.path === "/keys") return sendJson(res, 200, { keys: [jwk] });
      if (request.method === "POST" && request.path === TOKEN_PATH) {
        tokenRequests.push(request);
        return sendJson(res, 200, { token_type: "Bearer", access_token: "app-token", expires_in: 3600 });
      }
      if (request.method === "POST" && request.path.startsWith("/v3/conversations/")) {
        sendJson(res, 200, { id: "reply-1" });
        return deliver(request);
      }
      sendJson(res, 404, {});
    });
    cleanups.push(() => botFramework.close());
    const { env, gateway } = await followSetup(
      "docs/guides/teams.md",
      "msteams",
      botFramework.origin,
      (settings) => {
        expect(settings.app_id).toBe(APP_ID);
        expect(settings.token_url).toBe(`https://login.microsoftonline.com${TOKEN_PATH}`);
        settings.token_url = `${botFramework.origin}${TOKEN_PATH}`;
        settings.openid_url = `${botFramework.origin}/openid`;
      },
    );
    const markdown = readFileSync("docs/guides/teams.md", "utf8").replace(/\s+/g, " ");
    const endpoint = /\*\*Messaging endpoint\*\* to `(https:\/\/[^`]+)`/.exec(markdown)?.[1];
    expect(endpoint).toBe("https://bot.example.org/channels/msteams/messages");
    const url = endpoint!.replace("https://bot.example.org", gateway.url);
    const jwt = (key = signer.privateKey, audience = APP_ID) =>
      new SignJWT({ serviceurl: botFramework.origin })
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setIssuer("https://api.botframework.com")
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(key);
    const activity = {
      type: "message",
      id: "1700000000000",
      serviceUrl: botFramework.origin,
      channelId: "msteams",
      from: { id: "29:ada", name: "Ada" },
      recipient: { id: `28:${APP_ID}`, name: "sessiond" },
      conversation: { id: "a:1on1-ada", conversationType: "personal" },
      text: "hello bot",
    };
    const post = async (token: string) =>
      (
        await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify(activity),
        })
      ).status;
    expect(await post(await jwt(stranger.privateKey))).toBe(401);
    expect(await post(await jwt(signer.privateKey, "another-app-id"))).toBe(401);
    expect(await post(await jwt())).toBe(202);
    const reply = await within(60_000, "the reply", delivered);
    expect(reply.path).toBe("/v3/conversations/a%3A1on1-ada/activities/1700000000000");
    expect(reply.headers.authorization).toBe("Bearer app-token");
    expect(reply.body).toMatchObject({ type: "message", replyToId: "1700000000000" });
    expect((reply.body as { text: string }).text).toContain("hello bot");
    const asked = new URLSearchParams(String(tokenRequests[0]?.body));
    expect(asked.get("client_id")).toBe(APP_ID);
    expect(asked.get("client_secret")).toBe(env.TEAMS_APP_PASSWORD);
    expect(await sessionKeys(gateway)).toEqual(["msteams:a:1on1-ada"]);
  }, 120_000);
});
