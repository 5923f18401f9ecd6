import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { parse, stringify } from "yaml";
import { within } from "../gateway/postgres/gateways.js";
import type { RecordedRequest } from "../support/http-server.js";
import { exported, type GuideServe, guideEnv, readGuide, serveLine, shell } from "./guide-steps.js";

const GATEWAY_TOKEN = "guide-chat-platforms-gateway-token";

/** For a test file following chat platforms' guides: the steps they share, undone after each test. */
export function useChatGuides() {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * Step 2 of a chat platform's guide as written, in a directory of its own: its yaml block as the config
   * (plus `api_base_url`, the local platform server, and what `edit` changes), the lines of its first sh
   * block (`export` lines set the environment of the rest), the last of them its `serve` line; and the line `serve` prints that the guide quotes, compared with its own address.
   */
  async function followSetup(
    guidePath: string,
    channel: string,
    apiBaseUrl: string,
    edit: (settings: Record<string, unknown>) => void = () => {},
  ) {
    const guide = readGuide(guidePath);
    const dir = mkdtempSync(join(tmpdir(), "sessiond-guide-chat-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const config = parse(guide.yaml[0]!) as { channels: Record<string, Record<string, unknown>> };
    expect(Object.keys(config.channels)).toEqual([channel]);
    config.channels[channel]!.api_base_url = apiBaseUrl;
    edit(config.channels[channel]!);
    writeFileSync(join(dir, "sessiond.yaml"), stringify(config));
    const lines = guide.sh[0]!;
    const env = guideEnv({ SESSIOND_TOKEN: GATEWAY_TOKEN });
    for (const line of lines.slice(0, -1)) {
      const name = /^export (\w+)=/.exec(line)?.[1];
      if (name) env[name] = await exported(line, { cwd: dir, env });
      else await shell(line, { cwd: dir, env });
    }
    expect(lines.at(-1)).toBe("sessiond serve");
    const gateway: GuideServe = await within(
      60_000,
      "sessiond serve",
      serveLine(lines.at(-1)!, { cwd: dir, env }),
    );
    cleanups.push(() => gateway.kill());
    const quoted = guide.text[0]!.replace("http://127.0.0.1:7420", gateway.url);
    await within(30_000, quoted, gateway.printed(new RegExp(`^channel ${channel}: `)));
    expect(gateway.output.text.split("\n")).toContain(quoted);
    return { guide, dir, env, gateway };
  }

  async function sessionKeys(gateway: GuideServe): Promise<string[]> {
    const response = await fetch(`${gateway.url}/api/sessions`, {
      headers: { authorization: `Bearer ${GATEWAY_TOKEN}` },
    });
    return ((await response.json()) as { sessions: Array<{ key: string }> }).sessions.map((s) => s.key);
  }

  /** A promise and its resolver: a fake platform resolves it when the gateway's reply reaches it. */
  function delivery() {
    let deliver!: (request: RecordedRequest) => void;
    const delivered = new Promise<RecordedRequest>((r) => {
      deliver = r;
    });
    return { deliver, delivered };
  }

  return { followSetup, sessionKeys, delivery };
}
