import { createPublicKey, generateKeyPairSync, verify } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { ed25519KeyProblem } from "../../src/channels/ed25519-key.js";
import { createChannels } from "../../src/channels/index.js";
import { isSessiondError } from "../../src/model/errors.js";
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

describe("discord interactions: replays and keys", () => {
  let gw: ChannelGateway | undefined;
  let discord: Awaited<ReturnType<typeof startDiscord>> | undefined;
  afterEach(async () => {
    await gw?.stop();
    await discord?.close();
    gw = undefined;
  });

  it("refuses a validly signed interaction 30 days old, or 10 minutes ahead, with 401 and stores nothing", async () => {
    discord = await startDiscord();
    gw = await startChannelGateway(
      { discord: { public_key: keys.publicKeyHex, api_base_url: discord.api } },
      {},
    );
    const now = Math.floor(Date.now() / 1000);
    const at = (seconds: number) =>
      fetch(
        gw?.at("/channels/discord/interactions") ?? "",
        signedInteraction(command(`old-${seconds}`, "replayed"), keys.privateKey, String(seconds)),
      );
    expect((await at(now - 30 * 24 * 3600)).status).toBe(401);
    expect((await at(now + 600)).status).toBe(401);
    expect((await at(now - 60)).status).toBe(200);
    await gw.channels.idle();
    expect(transcript(await gw.entries("discord:dm:77"))).toEqual([
      "user: replayed",
      "assistant: re: replayed",
    ]);
  });

  // libsodium's blocklist (ge25519_has_small_order) and non-canonical encodings: node:crypto accepts them all.
  const BAD_KEYS: Record<string, string> = {
    "zero (order 4)": "00".repeat(32),
    "one (order 1)": `01${"00".repeat(31)}`,
    "order 8": "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "order 8, the other": "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "p - 1 (order 2)": `ec${"ff".repeat(30)}7f`,
    "p (non-canonical zero)": `ed${"ff".repeat(30)}7f`,
    "p + 1 (non-canonical one)": `ee${"ff".repeat(30)}7f`,
    "one with the sign bit (x = 0, sign 1)": `01${"00".repeat(30)}80`,
  };

  for (const [what, hex] of Object.entries(BAD_KEYS)) {
    it(`refuses the public key ${what} at start with CONFIG_INVALID`, () => {
      let error: unknown;
      try {
        createChannels({ discord: { public_key: hex } }, { env: {} });
      } catch (e) {
        error = e;
      }
      expect(isSessiondError(error, "CONFIG_INVALID")).toBe(true);
      expect((error as Error).message).toMatch(/^channels\.discord\.public_key: not a usable Ed25519 key: /);
    });
  }

  it("takes real keys (200 generated ones)", () => {
    for (let i = 0; i < 200; i++) {
      const raw = generateKeyPairSync("ed25519")
        .publicKey.export({ format: "der", type: "spki" })
        .subarray(12);
      expect(ed25519KeyProblem(raw)).toBeUndefined();
    }
  });

  // Node 24's node:crypto refuses this signature itself (24.21.0 here); Node 22's accepts it (22.23.3, with the
  // same OpenSSL 3.5.8), so the check stays needed while 22 is supported.
  it("with the order-1 key, a forged signature of zeros verifies in Node 22's node:crypto: the check is needed", () => {
    const weak = createPublicKey({
      key: Buffer.concat([
        Buffer.from("302a300506032b6570032100", "hex"),
        Buffer.from(BAD_KEYS["one (order 1)"] ?? "", "hex"),
      ]),
      format: "der",
      type: "spki",
    });
    // R = identity, S = 0: valid for any message under a key of order 1.
    const forged = Buffer.concat([Buffer.from(`01${"00".repeat(31)}`, "hex"), Buffer.alloc(32)]);
    const node22 = Number(process.versions.node.split(".")[0]) < 24;
    expect(verify(null, Buffer.from("1700000000{}"), weak, forged)).toBe(node22);
  });
});
