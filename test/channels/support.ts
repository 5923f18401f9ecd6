import { createHmac } from "node:crypto";
import type { ServerResponse } from "node:http";
import {
  type AttachedChannels,
  type ChannelsConfig,
  channelHost,
  createChannels,
} from "../../src/channels/index.js";
import type { EngineConfig } from "../../src/config/engine-config.js";
import type { Entry } from "../../src/model/entry.js";
import type { Runtime, RuntimeEvent, RuntimeRun } from "../../src/model/runtime.js";
import { startTestGateway, type TestGateway } from "../gateway/http/helpers.js";
import { type RecordedRequest, sendJson } from "../support/http-server.js";

export { sendJson };

/** A runtime that answers `re: <input>` and keeps every run, so a test can read what a turn saw. */
export function recordingRuntime(runs: RuntimeRun[]): Runtime {
  return {
    kind: "echo",
    keeps: { runtimeSessions: false, costs: false },
    async *run(run: RuntimeRun): AsyncGenerator<RuntimeEvent, void, undefined> {
      runs.push(run);
      yield { type: "text", delta: `re: ${run.input}` };
    },
  };
}

export interface ChannelGateway extends TestGateway {
  channels: AttachedChannels;
  /** What `start()` said of channels that could not start. */
  startLines: string[];
  /** Every wait between delivery tries, in ms (nothing really sleeps). */
  waits: number[];
  runs: RuntimeRun[];
  /** The gateway's URL for a channel path: `/channels/telegram`. */
  at(path: string): string;
  /** The current session's entries of a key, or [] when it has none. */
  entries(key: string): Promise<Entry[]>;
}

/** A gateway (memory store) with the given channels mounted and started; tries are retried without sleeping. */
export async function startChannelGateway(
  config: ChannelsConfig,
  env: NodeJS.ProcessEnv,
  engineConfig: EngineConfig = {},
  options: {
    maxPending?: number;
    runtime?: Runtime;
    webDir?: string;
    /** Waits of the channel supervisor's backoff (default: recorded in `waits`, not slept). */
    restartWait?: (ms: number, signal?: AbortSignal) => Promise<void>;
    /** One platform call's timeout (default 30 s). */
    retryTimeoutMs?: number;
  } = {},
): Promise<ChannelGateway> {
  const waits: number[] = [];
  const runs: RuntimeRun[] = [];
  const channels = createChannels(config, {
    env,
    ...(options.maxPending !== undefined ? { maxPending: options.maxPending } : {}),
    retry: {
      wait: async (ms) => {
        waits.push(ms);
      },
      ...(options.retryTimeoutMs !== undefined ? { timeoutMs: options.retryTimeoutMs } : {}),
    },
    restart: {
      wait:
        options.restartWait ??
        (async (ms) => {
          waits.push(ms);
        }),
    },
  });
  let attached: AttachedChannels | undefined;
  const agents = engineConfig.agents ?? ["main"];
  const gateway = await startTestGateway(engineConfig, {
    runtimes: new Map(agents.map((a) => [a, options.runtime ?? recordingRuntime(runs)])),
    ...(options.webDir !== undefined ? { webDir: options.webDir } : {}),
    channelStates: channels.status,
    publicRoutes: (deps) => {
      attached = channels.attach(channelHost(deps));
      return attached.app;
    },
  });
  if (!attached) throw new Error("the channels were not attached");
  const running = attached;
  const startLines = await running.start();
  return {
    ...gateway,
    channels: running,
    startLines,
    waits,
    runs,
    at: (path) => `${gateway.url}${path}`,
    entries: async (key) => {
      const session = await gateway.engine.sessions.get(key);
      return session ? gateway.engine.store.readEntries(session.id) : [];
    },
    stop: async () => {
      await running.close();
      await gateway.stop();
    },
  };
}

/** The text of each message entry, `role: content`. */
export function transcript(entries: Entry[]): string[] {
  return entries.flatMap((e) => (e.type === "message" ? [`${e.role}: ${e.content}`] : []));
}

/** A platform API route table: the handler for `METHOD path`, else 404. */
export function platformRoutes(
  routes: Record<string, (request: RecordedRequest, res: ServerResponse) => void | Promise<void>>,
) {
  return async (request: RecordedRequest, res: ServerResponse) => {
    const handler = routes[`${request.method} ${request.path}`];
    if (handler) await handler(request, res);
    else sendJson(res, 404, { ok: false, description: `no route ${request.method} ${request.path}` });
  };
}

/** A request as Slack sends it: the JSON body signed with `secret` (`v0` HMAC) at `at` (seconds, default now). */
export function slackSigned(secret: string, body: unknown, at = Math.floor(Date.now() / 1000)): RequestInit {
  const text = JSON.stringify(body);
  const signature = `v0=${createHmac("sha256", secret).update(`v0:${at}:${text}`).digest("hex")}`;
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": String(at),
      "x-slack-signature": signature,
    },
    body: text,
  };
}

/** A WhatsApp Cloud API `messages` notification: one text from wa_id 4915112345 to phone number id PN1. */
export const whatsappNotification = (id: string, text: string) => ({
  object: "whatsapp_business_account",
  entry: [
    {
      id: "WABA1",
      changes: [
        {
          field: "messages",
          value: {
            messaging_product: "whatsapp",
            metadata: { display_phone_number: "15550001111", phone_number_id: "PN1" },
            contacts: [{ wa_id: "4915112345", profile: { name: "Ann" } }],
            messages: [
              { from: "4915112345", id, timestamp: "1700000000", type: "text", text: { body: text } },
            ],
          },
        },
      ],
    },
  ],
});
