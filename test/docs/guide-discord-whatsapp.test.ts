import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { interactionKeys, signedInteraction } from "../channels/discord-server.js";
import { platformRoutes, sendJson, whatsappNotification } from "../channels/support.js";
import { within } from "../gateway/postgres/gateways.js";
import { startLocalServer } from "../support/http-server.js";
import { useChatGuides } from "./guide-chat.js";
import { shell } from "./guide-steps.js";

const { followSetup, sessionKeys, delivery } = useChatGuides();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The URL a guide names in prose after `label` (a Request, Callback or Endpoint URL). */
function urlAfter(path: string, label: string): string | undefined {
  const markdown = readFileSync(path, "utf8").replace(/\s+/g, " ");
  return new RegExp(`${label}\\*\\* to \`(https://[^\`]+)\``).exec(markdown)?.[1];
}

describe("docs/guides/discord.md, followed literally", () => {
  it("the endpoint answers Discord's signed PING and refuses a bad signature; /ask registered with curl is answered as a follow-up", async () => {
    const { publicKeyHex: publicHex, privateKey } = interactionKeys();
    const commands: unknown[] = [];
    const { deliver, delivered } = delivery();
    const applicationId = "the-application-id";
    const api = await startLocalServer(
      platformRoutes({
        [`POST /api/v10/applications/${applicationId}/commands`]: (request, res) => {
          expect(request.headers.authorization).toBe("Bot the-bot-token");
          commands.push(request.body);
          sendJson(res, 201, {
            id: "1100",
            application_id: applicationId,
            version: "1",
            ...(request.body as object),
          });
        },
        [`POST /api/v10/webhooks/${applicationId}/interaction-token`]: (request, res) => {
          sendJson(res, 200, { id: "1200" });
          deliver(request);
        },
      }),
    );
    cleanups.push(() => api.close());
    const { guide, dir, env, gateway } = await followSetup(
      "docs/guides/discord.md",
      "discord",
      `${api.origin}/api`,
      (settings) => {
        expect(settings.public_key).toBe("your-application-public-key-in-hex");
        settings.public_key = publicHex;
      },
    );
    const endpoint = urlAfter("docs/guides/discord.md", "Interactions Endpoint URL");
    expect(endpoint).toBe("https://bot.example.org/channels/discord/interactions");
    const url = endpoint!.replace("https://bot.example.org", gateway.url);
    const signed = (body: unknown, key = privateKey) => signedInteraction(body, key);
    // Step 4: what Discord sends before it saves the URL.
    const ping = { id: "900", application_id: applicationId, type: 1, token: "ping-token", version: 1 };
    const pong = await fetch(url, signed(ping));
    expect(pong.status).toBe(200);
    expect(await pong.json()).toEqual({ type: 1 });
    expect((await fetch(url, signed(ping, interactionKeys().privateKey))).status).toBe(401);
    // Step 5: the guide's curl, against the local API.
    expect(guide.sh[1]).toHaveLength(1);
    const stored = await shell(guide.sh[1]![0]!.replace("https://discord.com", api.origin), {
      cwd: dir,
      env,
    });
    expect(JSON.parse(stored)).toMatchObject({ id: "1100", name: "ask" });
    expect(commands).toEqual([
      {
        name: "ask",
        description: "Ask the agent",
        options: [{ type: 3, name: "message", description: "What to ask", required: true }],
      },
    ]);
    // Step 6: /ask message: hello in a server's channel.
    const command = {
      id: "901",
      application_id: applicationId,
      type: 2,
      token: "interaction-token",
      version: 1,
      guild_id: "G1",
      channel_id: "C1",
      member: { user: { id: "U1", username: "ada", global_name: "Ada" } },
      data: { id: "1100", name: "ask", type: 1, options: [{ type: 3, name: "message", value: "hello" }] },
    };
    const deferred = await fetch(url, signed(command));
    expect(await deferred.json()).toEqual({ type: 5 });
    const followUp = await within(60_000, "the follow-up", delivered);
    expect((followUp.body as { content: string }).content).toContain("hello");
    expect(await sessionKeys(gateway)).toEqual(["discord:C1:U1"]);
  }, 120_000);
});

describe("docs/guides/whatsapp.md, followed literally", () => {
  it("Meta's verification GET gets the challenge only with the verify token; a signed message is answered quoting it", async () => {
    const { deliver, delivered } = delivery();
    const graph = await startLocalServer(
      platformRoutes({
        "POST /v21.0/PN1/messages": (request, res) => {
          sendJson(res, 200, { messaging_product: "whatsapp", messages: [{ id: "wamid.reply" }] });
          deliver(request);
        },
      }),
    );
    cleanups.push(() => graph.close());
    const { env, gateway } = await followSetup("docs/guides/whatsapp.md", "whatsapp", graph.origin);
    expect(env.WA_VERIFY_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    const callback = urlAfter("docs/guides/whatsapp.md", "Callback URL");
    expect(callback).toBe("https://bot.example.org/channels/whatsapp");
    const url = callback!.replace("https://bot.example.org", gateway.url);
    // Step 4: Meta's GET when "Verify and save" is pressed.
    const verify = (token: string) =>
      fetch(
        `${url}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=${encodeURIComponent(token)}`,
      );
    const verified = await verify(env.WA_VERIFY_TOKEN!);
    expect(verified.status).toBe(200);
    expect(await verified.text()).toBe("1158201444");
    expect((await verify("another-token")).status).toBe(403);
    // Step 5: a message, as the Cloud API notifies it, signed with the App Secret.
    const notification = whatsappNotification("wamid.in1", "hello");
    const post = (secret: string) => {
      const text = JSON.stringify(notification);
      const signature = `sha256=${createHmac("sha256", secret).update(text).digest("hex")}`;
      return fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-hub-signature-256": signature },
        body: text,
      });
    };
    expect((await post("not-the-app-secret")).status).toBe(401);
    expect((await post(env.WA_APP_SECRET!)).status).toBe(200);
    const sent = await within(60_000, "the reply", delivered);
    expect(sent.headers.authorization).toBe(`Bearer ${env.WA_TOKEN}`);
    expect(sent.body).toMatchObject({
      messaging_product: "whatsapp",
      to: "4915112345",
      context: { message_id: "wamid.in1" },
    });
    expect(JSON.stringify(sent.body)).toContain("hello");
    expect(await sessionKeys(gateway)).toEqual(["whatsapp:4915112345"]);
  }, 120_000);
});
