import type { Command } from "commander";
import { DEFAULT_HOST, DEFAULT_PORT } from "../../gateway/defaults.js";
import { validateKey } from "../../keys/index.js";
import type { ShareLink } from "../../shares/share.js";
import { type GlobalOptions, withEngine } from "../context.js";
import type { CliIo } from "../io.js";

interface ShareOptions extends GlobalOptions {
  baseUrl?: string;
  json?: boolean;
}

const BASE_URL_HELP =
  "the gateway's address as readers reach it (default: http://$SESSIOND_HOST:$SESSIOND_PORT, as serve binds)";

/** The link's address on the gateway at `base`: the CLI writes to the store, so it cannot know the host. */
function urlOf(io: CliIo, options: ShareOptions, id: string): string {
  const base =
    options.baseUrl ??
    `http://${io.env.SESSIOND_HOST ?? DEFAULT_HOST}:${io.env.SESSIOND_PORT ?? String(DEFAULT_PORT)}`;
  return `${base.replace(/\/+$/, "")}/share/${id}`;
}

const withUrl = (io: CliIo, options: ShareOptions, link: ShareLink) => ({
  ...link,
  url: urlOf(io, options, link.id),
});

/** `sessions share KEY`: a read-only link to the session as it is now; `sessions shares KEY`: its links. */
export function registerShare(sessions: Command, io: CliIo): void {
  sessions
    .command("share")
    .description(
      "make a read-only link to the key's conversation as it is now (later messages are not shown)",
    )
    .argument("<key>", "session key")
    .option("--base-url <url>", BASE_URL_HELP)
    .option("--json", "print the link as JSON")
    .action(async (key: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ShareOptions>();
      validateKey(key);
      const link = await withEngine(options, io, { readOnly: false }, (engine) => engine.shares.create(key));
      const shown = withUrl(io, options, link);
      io.stdout(options.json ? `${JSON.stringify(shown, null, 2)}\n` : `${shown.url}\n`);
    });
  sessions
    .command("shares")
    .description("list the key's share links, oldest first")
    .argument("<key>", "session key")
    .option("--base-url <url>", BASE_URL_HELP)
    .option("--json", "print the links as JSON")
    .action(async (key: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ShareOptions>();
      validateKey(key);
      const links = await withEngine(options, io, { readOnly: true }, (engine) => engine.shares.list(key));
      const shown = links.map((link) => withUrl(io, options, link));
      if (options.json) {
        io.stdout(`${JSON.stringify(shown, null, 2)}\n`);
        return;
      }
      for (const link of shown) {
        io.stdout(
          `${link.id}  up to seq ${link.headSeq}  ${new Date(link.createdAt).toISOString()}  ${link.url}\n`,
        );
      }
    });
}
