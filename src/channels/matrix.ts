import { createHash } from "node:crypto";
import { Hono } from "hono";
import { LRUCache } from "lru-cache";
import type { ChatType } from "../model/envelope.js";
import type { ChannelsConfig } from "./config.js";
import { secretOf } from "./config.js";
import { callPlatform, type RetryOptions } from "./deliver.js";
import { parseObject, rawBody, sameSecret, unauthorized } from "./http.js";
import { RecentIds } from "./recent-ids.js";
import { readSecret } from "./secrets.js";
import type { ChannelAdapter, ChannelHost, Receive } from "./types.js";

type MatrixSettings = NonNullable<ChannelsConfig["matrix"]>;

interface MatrixEvent {
  type: string;
  room_id: string;
  sender: string;
  event_id: string;
  /** A membership event's: whose membership it is. */
  state_key?: string;
  content?: {
    membership?: string;
    msgtype?: string;
    body?: string;
    "m.mentions"?: { user_ids?: string[] };
    "m.relates_to"?: { rel_type?: string; event_id?: string; "m.in_reply_to"?: { event_id?: string } };
  };
}

/** Rooms whose member count is remembered (a room of two is a direct chat). */
const MAX_ROOMS = 10_000;
/** How long a member count is trusted; a membership event in a transaction forgets it sooner. */
export const MEMBER_COUNT_TTL_MS = 60_000;

/**
 * A Matrix application service: the homeserver PUTs transactions, authenticated with the `hs_token`;
 * `m.room.message` events become envelopes (threads from `m.relates_to`), and replies are sent as
 * `m.room.message` with the `as_token`, in the thread, with a transaction id derived from the event
 * answered so a retried send is not posted twice.
 */
export function matrixChannel(
  settings: MatrixSettings,
  env: NodeJS.ProcessEnv,
  retry: RetryOptions = {},
  now: () => number = Date.now,
): ChannelAdapter {
  const hsToken = readSecret(secretOf(settings, "hs_token"), "matrix.hs_token", env);
  const asToken = readSecret(secretOf(settings, "as_token"), "matrix.as_token", env);
  const homeserver = settings.homeserver_url.replace(/\/$/, "");
  const botId = settings.user_id;
  const localpart = botId.slice(1, botId.indexOf(":")).toLowerCase();
  const roomSizes = new LRUCache<string, { size: number; at: number }>({ max: MAX_ROOMS });
  // Ids of the events the bot sent, so a reply to one of them counts as addressing it.
  const sentByBot = new RecentIds(256 * 1024);
  const auth = { authorization: `Bearer ${asToken}` };

  const isDirect = async (room: string): Promise<boolean> => {
    const known = roomSizes.get(room);
    let size = known && now() - known.at < MEMBER_COUNT_TTL_MS ? known.size : undefined;
    if (size === undefined) {
      const answer = (await callPlatform(
        {
          what: "matrix joined_members",
          method: "GET",
          url: `${homeserver}/_matrix/client/v3/rooms/${encodeURIComponent(room)}/joined_members`,
          headers: auth,
        },
        retry,
      ).catch(() => undefined)) as { joined?: Record<string, unknown> } | undefined;
      // Unknown stays unknown (a group: answered only when mentioned) and is asked again next time.
      if (!answer?.joined) return false;
      size = Object.keys(answer.joined).length;
      roomSizes.set(room, { size, at: now() });
    }
    return size <= 2;
  };

  // Invited, the bot joins (as itself: the as_token acts as the registration's sender), in the background so
  // that the homeserver's transaction is answered at once; a join that fails is logged.
  const join = (room: string, logger: ChannelHost["logger"]) => {
    callPlatform(
      {
        what: "matrix join",
        url: `${homeserver}/_matrix/client/v3/join/${encodeURIComponent(room)}`,
        headers: auth,
        body: {},
      },
      retry,
    ).catch((error: unknown) =>
      logger.warn(
        { channel: "matrix", err: (error as Error).message },
        "could not join the room it was invited to",
      ),
    );
  };

  const take = async (event: MatrixEvent, receive: Receive, host: ChannelHost) => {
    // Someone joined or left: a room of two may be a group now (and the other way round).
    if (event.type === "m.room.member") {
      roomSizes.delete(event.room_id);
      if (event.state_key === botId && event.content?.membership === "invite")
        join(event.room_id, host.logger);
      return;
    }
    const body = event.content?.body;
    if (event.type !== "m.room.message" || event.sender === botId || typeof body !== "string") return;
    const relation = event.content?.["m.relates_to"];
    const thread = relation?.rel_type === "m.thread" ? relation.event_id : undefined;
    const direct = await isDirect(event.room_id);
    const type: ChatType = direct ? "direct" : thread ? "thread" : "group";
    const repliedTo = relation?.["m.in_reply_to"]?.event_id;
    const mentioned =
      (event.content?.["m.mentions"]?.user_ids ?? []).includes(botId) ||
      body.includes(botId) ||
      new RegExp(`(^|\\W)@?${localpart.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`, "i").test(body) ||
      (repliedTo !== undefined && sentByBot.has(repliedTo));
    await receive({
      envelope: {
        channel: "matrix",
        ...(settings.agent ? { agent: settings.agent } : {}),
        account: botId,
        chat: { type, id: event.room_id, ...(thread && !direct ? { threadId: thread } : {}) },
        sender: { id: event.sender },
        text: body,
        platformMessageId: event.event_id,
      },
      addressed: direct || mentioned,
      reply: async (text) => {
        const txn = createHash("sha256").update(`${botId}\n${event.event_id}`).digest("hex").slice(0, 32);
        const answer = (await callPlatform(
          {
            what: "matrix send m.room.message",
            method: "PUT",
            url: `${homeserver}/_matrix/client/v3/rooms/${encodeURIComponent(event.room_id)}/send/m.room.message/sessiond-${txn}`,
            headers: auth,
            body: {
              msgtype: "m.text",
              body: text,
              "m.relates_to": thread
                ? {
                    rel_type: "m.thread",
                    event_id: thread,
                    is_falling_back: true,
                    "m.in_reply_to": { event_id: event.event_id },
                  }
                : { "m.in_reply_to": { event_id: event.event_id } },
            },
          },
          retry,
        )) as { event_id?: string } | undefined;
        if (answer?.event_id) sentByBot.add(answer.event_id);
      },
    });
  };

  return {
    name: "matrix",
    routes: (receive, host) =>
      new Hono().put("/_matrix/app/v1/transactions/:txn", async (c) => {
        const header = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
        if (!sameSecret(header ?? c.req.query("access_token"), hsToken)) {
          throw unauthorized("missing or wrong hs_token");
        }
        const payload = parseObject(await rawBody(c, host.bodyLimit)) as { events?: MatrixEvent[] };
        for (const event of payload.events ?? []) await take(event, receive, host);
        return c.json({});
      }),
    describe: (gatewayUrl) => `matrix: application service URL ${gatewayUrl}/channels/matrix`,
  };
}
