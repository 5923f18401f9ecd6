import { afterEach, describe, expect, it } from "vitest";
import { APP_ID, BOT_ID, interactionKeys, signedInteraction, startDiscord } from "./discord-server.js";
import { type ChannelGateway, sendJson, startChannelGateway, transcript } from "./support.js";

const keys = interactionKeys();

const command = (id: string, text: string, where: { guild_id?: string } = {}) => ({
  id,
  application_id: APP_ID,
  type: 2,
  token: `interaction-token-${id}`,
  channel_id: "300",
  ...(where.guild_id
    ? { guild_id: where.guild_id, member: { user: { id: "77", username: "ann" } } }
    : { user: { id: "77", username: "ann" } }),
  data: { name: "ask", options: [{ name: "text", value: text }] },
});

const message = (id: string, content: string, extra: Record<string, unknown> = {}) => ({
  id,
  channel_id: "400",
  author: { id: "77", username: "ann" },
  content,
  mentions: [],
  ...extra,
});

describe("discord", () => {
  let gw: ChannelGateway;
  let discord: Awaited<ReturnType<typeof startDiscord>>;
  afterEach(async () => {
    await gw?.stop();
    await discord?.close();
  });

  async function start(gateway = false) {
    discord = await startDiscord();
    gw = await startChannelGateway(
      {
        discord: {
          public_key: keys.publicKeyHex,
          api_base_url: discord.api,
          ...(gateway ? { gateway: true, token_env: "DISCORD_TOKEN" } : {}),
        },
      },
      { DISCORD_TOKEN: "discord-bot-token" },
    );
  }
  const interact = (body: unknown, privateKey = keys.privateKey) =>
    fetch(gw.at("/channels/discord/interactions"), signedInteraction(body, privateKey));

  it("answers PING and refuses a bad or missing signature with 401, storing nothing", async () => {
    await start();
    expect(await (await interact({ type: 1 })).json()).toEqual({ type: 1 });
    expect((await interact(command("1", "hi"), interactionKeys().privateKey)).status).toBe(401);
    const unsigned = await fetch(gw.at("/channels/discord/interactions"), {
      method: "POST",
      body: JSON.stringify(command("1", "hi")),
    });
    expect(unsigned.status).toBe(401);
    expect((await gw.engine.sessions.list()).sessions).toEqual([]);
  });

  it("defers a DM command and answers with a follow-up, keyed discord:dm:<user>", async () => {
    await start();
    expect(await (await interact(command("10", "hello"))).json()).toEqual({ type: 5 });
    await gw.channels.idle();
    expect(transcript(await gw.entries("discord:dm:77"))).toEqual(["user: hello", "assistant: re: hello"]);
    expect(discord.sent[0]?.path).toBe(`/api/v10/webhooks/${APP_ID}/interaction-token-10`);
    expect(discord.sent[0]?.body).toEqual({ content: "re: hello" });
  });

  it("keys a guild command per user in its channel and answers a redelivery once", async () => {
    await start();
    await interact(command("11", "in guild", { guild_id: "1" }));
    await interact(command("11", "in guild", { guild_id: "1" }));
    await gw.channels.idle();
    expect(transcript(await gw.entries("discord:300:77"))).toHaveLength(2);
    expect(discord.sent).toHaveLength(1);
  });

  it("takes Gateway messages: a DM is answered in its channel with REST create message", async () => {
    await start(true);
    expect(discord.identifies[0]).toMatchObject({ token: "discord-bot-token", intents: 37376 });
    discord.dispatch("MESSAGE_CREATE", message("20", "over the gateway"));
    await discord.until(() => discord.sent.length === 1);
    await gw.channels.idle();
    expect(transcript(await gw.entries("discord:dm:77"))).toEqual([
      "user: over the gateway",
      "assistant: re: over the gateway",
    ]);
    expect(discord.sent[0]?.path).toBe("/api/v10/channels/400/messages");
    expect(discord.sent[0]?.headers.authorization).toBe("Bot discord-bot-token");
    expect(discord.sent[0]?.body).toEqual({
      content: "re: over the gateway",
      message_reference: { message_id: "20", fail_if_not_exists: false },
    });
  });

  it("stores an unmentioned guild message as context, answers the next mention, retrying a 429", async () => {
    await start(true);
    discord.failures.push((res) =>
      sendJson(res, 429, { message: "You are being rate limited.", retry_after: 1.5, global: false }),
    );
    discord.dispatch("MESSAGE_CREATE", message("30", "the cache is cold", { guild_id: "1" }));
    discord.dispatch(
      "MESSAGE_CREATE",
      message("31", `<@${BOT_ID}> warm it?`, { guild_id: "1", mentions: [{ id: BOT_ID }] }),
    );
    // A redelivered mention and the bot's own message are not answered.
    discord.dispatch(
      "MESSAGE_CREATE",
      message("31", `<@${BOT_ID}> warm it?`, { guild_id: "1", mentions: [{ id: BOT_ID }] }),
    );
    discord.dispatch(
      "MESSAGE_CREATE",
      message("32", "own", { guild_id: "1", author: { id: BOT_ID, bot: true } }),
    );
    await discord.until(() => discord.sent.length === 1);
    await gw.channels.idle();
    expect(transcript(await gw.entries("discord:400:77"))).toEqual([
      "user: the cache is cold",
      `user: <@${BOT_ID}> warm it?`,
      `assistant: re: <@${BOT_ID}> warm it?`,
    ]);
    expect(gw.waits).toEqual([1500]);
    expect(discord.sent).toHaveLength(1);
  });
});
