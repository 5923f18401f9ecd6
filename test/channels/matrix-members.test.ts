import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { matrixChannel } from "../../src/channels/matrix.js";
import type { ChannelHost, Inbound } from "../../src/channels/types.js";
import { startLocalServer } from "../support/http-server.js";
import { type ChannelGateway, sendJson, startChannelGateway } from "./support.js";

const env = { HS_TOKEN: "hs-secret", AS_TOKEN: "as-secret" };
const ROOM = "!grew:hs.local";
const settings = {
  hs_token_env: "HS_TOKEN",
  as_token_env: "AS_TOKEN",
  user_id: "@bot:hs.local",
  homeserver_url: "",
};

const said = (id: string, sender: string, body: string) => ({
  type: "m.room.message",
  room_id: ROOM,
  sender,
  event_id: id,
  content: { msgtype: "m.text", body },
});
const joined = (user: string) => ({
  type: "m.room.member",
  room_id: ROOM,
  sender: user,
  state_key: user,
  event_id: `$join-${user}`,
  content: { membership: "join" },
});

/** A homeserver whose room has `members.count` members; it records the bot's sends. */
async function homeserver() {
  const members = { count: 2 };
  const server = await startLocalServer((request, res) => {
    if (request.path.endsWith("/joined_members")) {
      const users = [
        "@bot:hs.local",
        ...Array.from({ length: members.count - 1 }, (_, i) => `@u${i}:hs.local`),
      ];
      return sendJson(res, 200, { joined: Object.fromEntries(users.map((u) => [u, {}])) });
    }
    if (request.method === "PUT" && request.path.includes("/send/m.room.message/")) {
      return sendJson(res, 200, { event_id: `$reply${server.requests.length}` });
    }
    sendJson(res, 404, { errcode: "M_UNRECOGNIZED" });
  });
  return { ...server, members };
}

describe("matrix: a room that grew is no longer a direct chat", () => {
  let hs: Awaited<ReturnType<typeof homeserver>>;
  let gw: ChannelGateway | undefined;
  beforeEach(async () => {
    hs = await homeserver();
  });
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
    await hs.close();
  });

  const sends = () => hs.requests.filter((r) => r.method === "PUT").length;

  it("forgets the member count when a membership event arrives: 2 → 40, unmentioned messages are not answered", async () => {
    gw = await startChannelGateway({ matrix: { ...settings, homeserver_url: hs.origin } }, env);
    let txn = 0;
    const put = (events: unknown[]) =>
      fetch(gw?.at(`/channels/matrix/_matrix/app/v1/transactions/${++txn}`) ?? "", {
        method: "PUT",
        headers: { authorization: "Bearer hs-secret" },
        body: JSON.stringify({ events }),
      });
    expect((await put([said("$1", "@u0:hs.local", "hello")])).status).toBe(200);
    await gw.channels.idle();
    expect(sends()).toBe(1);
    hs.members.count = 40;
    expect((await put([joined("@u1:hs.local"), said("$2", "@u1:hs.local", "just chatting")])).status).toBe(
      200,
    );
    await gw.channels.idle();
    // Not addressed in a group: stored as context, no reply posted into the room.
    expect(sends()).toBe(1);
    expect(gw.runs).toHaveLength(1);
  });

  it("asks again once the count is a minute old, with no membership event seen", async () => {
    let clock = 1_000_000;
    const adapter = matrixChannel({ ...settings, homeserver_url: hs.origin }, env, {}, () => clock);
    const taken: Inbound[] = [];
    const host = {
      bodyLimit: 1 << 20,
      logger: { info() {}, warn() {}, error() {} },
    } as unknown as ChannelHost;
    const app = adapter.routes?.(async (inbound) => {
      taken.push(inbound);
      return "context";
    }, host);
    const put = (txn: string, event: unknown) =>
      app?.request(`/_matrix/app/v1/transactions/${txn}`, {
        method: "PUT",
        headers: { authorization: "Bearer hs-secret" },
        body: JSON.stringify({ events: [event] }),
      });
    await put("a", said("$a", "@u0:hs.local", "one"));
    hs.members.count = 40;
    clock += 30_000;
    await put("b", said("$b", "@u0:hs.local", "two"));
    clock += 31_000;
    await put("c", said("$c", "@u0:hs.local", "three"));
    expect(taken.map((t) => [t.envelope.chat.type, t.addressed])).toEqual([
      ["direct", true],
      ["direct", true],
      ["group", false],
    ]);
  });
});
