import { SessiondError } from "../model/errors.js";
import type { ChatOrigin, SourceRead } from "./types.js";

/**
 * The channels whose sessiond adapter names its bot account by a number the platform gives it (Telegram:
 * the bot id, the digits before the colon of its token; Discord: the application id), where a peer names
 * the account as its config does (`default`, `bota`).
 */
const NUMBERED_ACCOUNTS: Readonly<Record<string, string>> = {
  telegram: "the bot's id, the number before the colon in its token",
  discord: "the application id",
};

/** `telegram:default=123456789,discord:bota=987` as `{"telegram:default": "123456789", …}`; INVALID_ARGUMENT on anything else. */
export function parseAccountMap(text: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const pair of text.split(",")) {
    const m = /^\s*([^=:,\s]+):([^=:,\s]+)\s*=\s*([^=,\s]+)\s*$/.exec(pair);
    if (!m?.[1] || !m[2] || !m[3])
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `--account-map wants <channel>:<peer account>=<sessiond account> pairs separated by commas (telegram:default=123456789); got ${JSON.stringify(pair)}`,
      );
    map[`${m[1]}:${m[2]}`] = m[3];
  }
  return map;
}

/** The peer's name for the bot account a chat came through; `default` where the peer records none. */
const accountOf = (origin: ChatOrigin) => origin.account ?? "default";

/**
 * Gives each chat of a mapped `<channel>:<account>` the account sessiond's channel names that bot by. A
 * pair that matches no chat (a misspelt account) is a problem of the read, named with the folder.
 */
export function mapAccounts(read: SourceRead, map: Readonly<Record<string, string>>, path: string): void {
  const unused = new Set(Object.keys(map));
  for (const session of read.sessions) {
    const origin = session.origin;
    const from = origin && `${origin.channel}:${accountOf(origin)}`;
    const to = from && map[from];
    if (!origin || !from || to === undefined) continue;
    session.origin = { ...origin, account: to };
    unused.delete(from);
  }
  for (const from of unused)
    read.problems.push({
      file: path,
      reason: `--account-map ${from}: no chat of the peer came through that account`,
    });
}

/**
 * Under `dm_scope: per-channel-account-peer` the account is in a direct chat's key: a peer's name for it
 * that sessiond's channel never uses means new messages miss the imported session. The sentence for the
 * report, or undefined when the account can be the channel's own.
 */
export function foreignAccount(origin: ChatOrigin): string | undefined {
  const own = NUMBERED_ACCOUNTS[origin.channel];
  const account = accountOf(origin);
  if (own === undefined || origin.chatType !== "direct" || /^\d+$/.test(account)) return undefined;
  return `account ${account} is the peer's name for its ${origin.channel} bot; sessiond's ${origin.channel} channel names the bot by ${own}: import with --account-map ${origin.channel}:${account}=<that id> so that new messages reach this chat`;
}
