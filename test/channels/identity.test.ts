import { expect, it } from "vitest";
import { startLocalServer } from "../support/http-server.js";
import { APP_ID, interactionKeys, signedInteraction, startDiscord } from "./discord-server.js";
import { platformRoutes, sendJson, startChannelGateway, transcript } from "./support.js";

it("identity links join one person's Telegram and Discord DMs into one session, each answered on its platform", async () => {
  const keys = interactionKeys();
  const discord = await startDiscord();
  const telegram = await startLocalServer(
    platformRoutes({
      "POST /bot1:tg/sendMessage": (_q, res) => sendJson(res, 200, { ok: true, result: {} }),
      "POST /bot1:tg/getMe": (_q, res) => sendJson(res, 200, { ok: true, result: { id: 1, username: "b" } }),
    }),
  );
  const gw = await startChannelGateway(
    {
      telegram: { token_env: "TG", secret_env: "TG_SECRET", api_base_url: telegram.origin },
      discord: { public_key: keys.publicKeyHex, api_base_url: discord.api },
    },
    { TG: "1:tg", TG_SECRET: "s" },
    { routing: { identityLinks: { ann: ["telegram:42", "discord:dm:77"] } } },
  );
  try {
    await fetch(gw.at("/channels/telegram"), {
      method: "POST",
      headers: { "x-telegram-bot-api-secret-token": "s" },
      body: JSON.stringify({
        update_id: 1,
        message: {
          message_id: 1,
          from: { id: 42 },
          chat: { id: 42, type: "private" },
          text: "from telegram",
        },
      }),
    });
    await gw.channels.idle();
    const interaction = {
      id: "5",
      application_id: APP_ID,
      type: 2,
      token: "t5",
      channel_id: "300",
      user: { id: "77" },
      data: { name: "ask", options: [{ name: "text", value: "from discord" }] },
    };
    await fetch(gw.at("/channels/discord/interactions"), signedInteraction(interaction, keys.privateKey));
    await gw.channels.idle();
    expect(transcript(await gw.entries("telegram:42"))).toEqual([
      "user: from telegram",
      "assistant: re: from telegram",
      "user: from discord",
      "assistant: re: from discord",
    ]);
    expect(await gw.engine.sessions.get("discord:dm:77")).toBeUndefined();
    expect(telegram.requests.filter((r) => r.path.endsWith("/sendMessage"))).toHaveLength(1);
    expect(discord.sent.map((r) => r.path)).toEqual([`/api/v10/webhooks/${APP_ID}/t5`]);
  } finally {
    await gw.stop();
    await discord.close();
    await telegram.close();
  }
});
