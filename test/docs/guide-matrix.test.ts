import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { platformRoutes, sendJson } from "../channels/support.js";
import { within } from "../gateway/postgres/gateways.js";
import { type RecordedRequest, startLocalServer } from "../support/http-server.js";
import { useChatGuides } from "./guide-chat.js";
import { shell } from "./guide-steps.js";

const { followSetup, sessionKeys, delivery } = useChatGuides();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ROOM = "!yourroom:example.org";

describe("docs/guides/matrix.md, followed literally", () => {
  it("the registration file it writes is what the homeserver needs; an invite pushed with its hs_token is joined, a message answered with its as_token", async () => {
    const joins: RecordedRequest[] = [];
    const { deliver, delivered } = delivery();
    // The reply's path ends with a transaction id of sessiond's: matched by its prefix.
    const sendPrefix = `/_matrix/client/v3/rooms/${encodeURIComponent(ROOM)}/send/m.room.message/`;
    const routes = platformRoutes({
      [`POST /_matrix/client/v3/join/${encodeURIComponent(ROOM)}`]: (request, res) => {
        joins.push(request);
        sendJson(res, 200, { room_id: ROOM });
      },
      [`GET /_matrix/client/v3/rooms/${encodeURIComponent(ROOM)}/joined_members`]: (_request, res) =>
        sendJson(res, 200, { joined: { "@ada:example.org": {}, "@sessiond:example.org": {} } }),
    });
    const homeserver = await startLocalServer(async (request, res) => {
      if (request.method !== "PUT" || !request.path.startsWith(sendPrefix)) return routes(request, res);
      sendJson(res, 200, { event_id: "$reply" });
      deliver(request);
    });
    cleanups.push(() => homeserver.close());
    const { guide, dir, env, gateway } = await followSetup(
      "docs/guides/matrix.md",
      "matrix",
      homeserver.origin,
      (settings) => {
        expect(settings.homeserver_url).toBe("https://matrix.example.org");
        settings.homeserver_url = homeserver.origin;
      },
    );
    for (const name of ["hs_token", "as_token"]) {
      expect(statSync(join(dir, "secrets", name)).mode & 0o777).toBe(0o600);
    }
    const hsToken = readFileSync(join(dir, "secrets", "hs_token"), "utf8").trim();
    const asToken = readFileSync(join(dir, "secrets", "as_token"), "utf8").trim();

    // Step 2, the here-document run whole; the file read as Synapse reads it.
    await shell(guide.shBlocks[1]!.replace("http://127.0.0.1:7420", gateway.url), { cwd: dir, env });
    const registration = parse(readFileSync(join(dir, "sessiond-registration.yaml"), "utf8")) as {
      url: string;
      as_token: string;
      hs_token: string;
      sender_localpart: string;
      namespaces: { users: Array<{ exclusive: boolean; regex: string }> };
    };
    expect(registration).toMatchObject({
      url: `${gateway.url}/channels/matrix`,
      as_token: asToken,
      hs_token: hsToken,
      sender_localpart: "sessiond",
    });
    expect(new RegExp(registration.namespaces.users[0]!.regex).test("@sessiond:example.org")).toBe(true);

    // Step 3: the homeserver tells sessiond of the invite; sessiond joins as the bot.
    const push = (txn: string, event: Record<string, unknown>, token?: string) =>
      fetch(`${registration.url}/_matrix/app/v1/transactions/${txn}`, {
        method: "PUT",
        headers: {
          "content-type": "application/json",
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ events: [event] }),
      });
    const invite = {
      type: "m.room.member",
      room_id: ROOM,
      sender: "@ada:example.org",
      event_id: "$invite",
      state_key: "@sessiond:example.org",
      content: { membership: "invite" },
    };
    expect((await push("1", invite, registration.hs_token)).status).toBe(200);
    await expect.poll(() => joins.length).toBe(1);
    expect(joins[0]?.headers.authorization).toBe(`Bearer ${registration.as_token}`);

    // Step 4: the homeserver pushes a transaction to the registered url with the registered hs_token.
    const message = {
      type: "m.room.message",
      room_id: ROOM,
      sender: "@ada:example.org",
      event_id: "$ev1",
      origin_server_ts: 1_700_000_000_000,
      content: { msgtype: "m.text", body: "hello bot" },
    };
    const transaction = (token?: string) => push("2", message, token);
    expect((await transaction()).status).toBe(401);
    expect((await transaction(registration.as_token)).status).toBe(401);
    expect((await transaction(registration.hs_token)).status).toBe(200);
    const sent = await within(60_000, "the reply", delivered);
    expect(sent.headers.authorization).toBe(`Bearer ${registration.as_token}`);
    expect(sent.body).toMatchObject({
      msgtype: "m.text",
      "m.relates_to": { "m.in_reply_to": { event_id: "$ev1" } },
    });
    expect((sent.body as { body: string }).body).toContain("hello bot");
    expect(await sessionKeys(gateway)).toEqual(["matrix:@ada:example.org"]);
  }, 120_000);
});
