import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { platformRoutes, sendJson } from "../channels/support.js";
import { within } from "../gateway/postgres/gateways.js";
import { gunzipAll } from "../import/helpers.js";
import type { RecordedRequest } from "../support/http-server.js";
import { startLocalServer } from "../support/http-server.js";
import { startOpenAiServer } from "../support/openai-server.js";
import { guideEnv, parseGuide, serveLine, sessiondOnPath } from "./guide-steps.js";

const run = promisify(execFile);
const PAGE = "docs/guides/moving-in.md";
const MARKDOWN = readFileSync(PAGE, "utf8");
const GATEWAY_TOKEN = "guide-moving-in-gateway-token";
const BOT_TOKEN = "123456789:AAE-moving-in";
const WEBHOOK_SECRET = "moving-in-webhook-secret";
/** The home the guide's quoted paths are in; the test's own home stands for it. */
const QUOTED_HOME = "/home/me";

/** Each section's peer: the committed fixture (written as the peer writes) and where the peer keeps it. */
const PEERS = [
  { heading: "From OpenClaw", fixture: "openclaw-real-2026.9", home: ".openclaw" },
  { heading: "From ZeroClaw", fixture: "zeroclaw", home: ".zeroclaw/workspace" },
  { heading: "From nanobot", fixture: "nanobot", home: ".nanobot" },
  { heading: "From PicoClaw", fixture: "picoclaw", home: ".picoclaw/workspace" },
  { heading: "From CrabTalk", fixture: "crabtalk", home: ".crabtalk" },
];

function section(heading: string): string {
  const start = MARKDOWN.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`${PAGE} has no section "${heading}"`);
  const end = MARKDOWN.indexOf("\n## ", start + 1);
  return MARKDOWN.slice(start, end < 0 ? undefined : end);
}

/** What a reader sees when bash runs `line`: stderr without the progress counts, then stdout. */
async function terminal(line: string, options: { cwd: string; env: NodeJS.ProcessEnv }) {
  try {
    const { stdout, stderr } = await run("bash", ["-c", line], options);
    const notes = stderr.split("\n").filter((l) => l !== "" && !/^(checking|importing): \d+\/\d+$/.test(l));
    return { stdout, seen: [...notes, ...stdout.split("\n").filter((l) => l !== "")].join("\n") };
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${line}\nfailed: ${stderr ?? ""}${stdout ?? ""}`);
  }
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe(`${PAGE}, followed literally`, () => {
  it("lists a section for every system `sessiond import --from` reads", async () => {
    const { stdout } = await run(process.execPath, ["dist/src/cli/main.js", "import", "--help"]);
    const systems = /--from <system>.*?\(choices: ([^)]*)\)/s.exec(stdout)?.[1] ?? "";
    const names = [...systems.matchAll(/"(\w+)"/g)].map((m) => m[1]);
    expect(names.length).toBeGreaterThan(0);
    const sections = PEERS.map((p) => /sessiond import --from (\w+)/.exec(section(p.heading))?.[1]);
    expect(sections.sort()).toEqual(names.sort());
  });

  it.each(PEERS)(
    "$heading: dry run, config, import, route; the next Telegram message continues the history",
    async (peer) => {
      const guide = parseGuide(section(peer.heading));
      const intro = parseGuide(MARKDOWN.slice(0, MARKDOWN.indexOf("\n## From ")));
      const home = mkdtempSync(join(tmpdir(), "sessiond-guide-moving-in-"));
      cleanups.push(() => rmSync(home, { recursive: true, force: true }));
      const peerDir = join(home, peer.home);
      cpSync(join("test/import/fixtures", peer.fixture), peerDir, { recursive: true });
      gunzipAll(peerDir);
      const dir = join(home, "sessiond");
      mkdirSync(dir);
      const bin = sessiondOnPath();
      cleanups.push(() => bin.remove());
      const env = guideEnv({
        HOME: home,
        PATH: bin.path,
        SESSIOND_TOKEN: GATEWAY_TOKEN,
        TELEGRAM_BOT_TOKEN: BOT_TOKEN,
        TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET,
      });
      const quoted = (text: string) => text.replaceAll(QUOTED_HOME, home);

      // Step 2: the dry run, before any config, prints what the guide quotes (the import's
      // `0 already there` below shows that it wrote nothing).
      expect(guide.sh[0]).toEqual([expect.stringMatching(/^sessiond import --from \w+ ~\/\S+ --dry-run$/)]);
      const dry = await terminal(guide.sh[0]![0]!, { cwd: dir, env });
      expect(dry.seen).toBe(quoted(guide.text[0]!));

      // Step 3: the guide's yaml; the test adds a local model for the agents and the Telegram channel.
      const model = await startOpenAiServer();
      cleanups.push(() => model.close());
      const sent = {
        deliver: (_r: RecordedRequest) => {},
        reply: undefined as Promise<RecordedRequest> | undefined,
      };
      sent.reply = new Promise((r) => {
        sent.deliver = r;
      });
      const telegram = await startLocalServer(
        platformRoutes({
          [`POST /bot${BOT_TOKEN}/getMe`]: (_q, res) =>
            sendJson(res, 200, {
              ok: true,
              result: { id: 123456789, is_bot: true, username: "moving_in_bot" },
            }),
          [`POST /bot${BOT_TOKEN}/sendMessage`]: (request, res) => {
            sendJson(res, 200, { ok: true, result: { message_id: 2 } });
            sent.deliver(request);
          },
        }),
      );
      cleanups.push(() => telegram.close());
      expect(guide.yaml).toHaveLength(1);
      const config = parse(guide.yaml[0]!) as { agents?: Array<Record<string, unknown>> } & Record<
        string,
        unknown
      >;
      config.models = { local: { provider: "openai", base_url: model.baseUrl, model: "test-model" } };
      config.agents = (config.agents ?? [{ id: "main" }]).map((agent) => ({ ...agent, model: "local" }));
      config.channels = {
        telegram: {
          token_env: "TELEGRAM_BOT_TOKEN",
          secret_env: "TELEGRAM_WEBHOOK_SECRET",
          api_base_url: telegram.origin,
        },
      };
      writeFileSync(join(dir, "sessiond.yaml"), stringify(config));

      // Steps 3 and 4: each further sh block, its lines' output as the text block after it quotes (a dry run
      // whole, other lines their stdout); the import is the dry run's line with at most an account map.
      expect(guide.sh.length).toBe(guide.text.length);
      let importLine = "";
      let key = "";
      for (const [i, block] of guide.sh.entries()) {
        if (i === 0) continue;
        const outputs: string[] = [];
        for (const line of block) {
          const output = await terminal(line, { cwd: dir, env });
          if (line.endsWith(" --dry-run")) outputs.push(`${output.seen}\n`);
          else outputs.push(output.stdout);
          if (line.startsWith("sessiond import")) {
            expect(line).toMatch(/^sessiond import --from \w+ ~\/\S+( --dry-run| --account-map \S+)?$/);
            if (!line.endsWith(" --dry-run")) importLine = line;
          } else {
            expect(line).toBe("sessiond route --channel telegram --account 123456789 --sender 12345");
            key = output.stdout.trim();
          }
        }
        expect(outputs.join("")).toBe(`${quoted(guide.text[i]!)}\n`);
      }
      expect(importLine.startsWith(guide.sh[0]![0]!.replace(" --dry-run", ""))).toBe(true);
      expect(key).not.toBe("");
      const again = await terminal(importLine, { cwd: dir, env });
      expect(again.stdout).toMatch(/; imported 0 sessions \(0 entries\); (\d+) already there;/);
      const listed = await terminal("sessiond sessions list --json", { cwd: dir, env });
      const keysBefore = (JSON.parse(listed.stdout) as { sessions: Array<{ key: string }> }).sessions
        .map((s) => s.key)
        .sort();
      expect(keysBefore).toContain(key);
      const shown = await terminal(`sessiond sessions show '${key}' --json`, { cwd: dir, env });
      const history = (
        JSON.parse(shown.stdout) as { entries: Array<{ type: string; role?: string; content?: string }> }
      ).entries;
      const lastImported = history.filter((e) => e.type === "message" && e.role === "user").at(-1)?.content;
      expect(lastImported).toBeTruthy();

      // Step 5: the intro's serve line; Telegram delivers the next message from chat 12345.
      expect(intro.sh).toEqual([["sessiond serve"]]);
      const gateway = await within(60_000, "sessiond serve", serveLine(intro.sh[0]![0]!, { cwd: dir, env }));
      cleanups.push(() => gateway.kill());
      const text = `moving in from ${peer.heading.slice(5)}`;
      const update = {
        update_id: 1,
        message: {
          message_id: 100,
          date: Math.floor(Date.now() / 1000),
          from: { id: 12345, is_bot: false, first_name: "Ada" },
          chat: { id: 12345, type: "private" },
          text,
        },
      };
      const posted = await fetch(`${gateway.url}/channels/telegram`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": WEBHOOK_SECRET },
        body: JSON.stringify(update),
      });
      expect(posted.status).toBe(200);
      const reply = (await within(60_000, "sendMessage", sent.reply!)).body as {
        chat_id: number;
        text: string;
      };
      expect(reply.chat_id).toBe(12345);
      expect(reply.text).toMatch(new RegExp(`^echo: [^]*${text}$`));

      // The model got the imported history before the new message, and no new session was opened.
      const messages = model
        .chatRequests()
        .at(-1)!
        .messages.map((m) => String(m.content));
      expect(messages.at(-1)).toContain(text);
      // (Consecutive user messages reach the model as one: CrabTalk's guest agent's last line and the new one.)
      expect(messages.join("\n").replace(text, "")).toContain(lastImported);
      expect(messages.length).toBeGreaterThan(2);
      const response = await fetch(`${gateway.url}/api/sessions`, {
        headers: { authorization: `Bearer ${GATEWAY_TOKEN}` },
      });
      const keysAfter = ((await response.json()) as { sessions: Array<{ key: string }> }).sessions
        .map((s) => s.key)
        .sort();
      expect(keysAfter).toEqual(keysBefore);
    },
    120_000,
  );
});
