import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkStore, type StoreCheck } from "./check.js";
import { asyncClient, chatClient, GatewayLives, openAiClient, type SentInput } from "./clients.js";
import {
  startTrialGateway,
  storeConfigOf,
  type TrialData,
  type TrialGateway,
  type TrialStore,
  writeTrialConfig,
} from "./gateway.js";
import { startEchoModel } from "./model.js";

export interface TrialOptions {
  store: TrialStore;
  /** The built CLI to run (dist/bundle/main.js of a checkout). */
  cli: string;
  /** PostgreSQL only: an empty database. */
  databaseUrl?: string;
  /** SIGKILLs, each followed by a restart on the same data. */
  kills: number;
  /** Clients on `POST /api/chat`, each on its own session. */
  chatClients: number;
  /** Clients on `POST /api/chat?async=1`, each on its own session: acknowledged when admitted (202). */
  asyncClients?: number;
  /**
   * Clients on `POST /v1/chat/completions`: even ones share their address's key, odd ones name a session;
   * of each four, the last two stream.
   */
  openAiClients: number;
  /** How long each gateway serves before its SIGKILL: a random time in this range. */
  upMs: [number, number];
  /** The model answers after a random delay up to this. */
  modelDelayMs: number;
  /** How long the last gateway serves the clients before they stop (at least until each got an answer). */
  lastUpMs: number;
  /** PostgreSQL: the lease and heartbeat time (a restarted gateway takes a dead one's inputs after it). */
  leaseTtlMs?: number;
  /** Keep the data dir when an input was stored twice or lost (its path is in the report). */
  keepOnFailure?: boolean;
  /** One line per life, as it happens. */
  log?: (line: string) => void;
}

export interface TrialReport extends StoreCheck {
  /** What recovery reported over all restarts. */
  recovered: { requeued: number; answered: number; interrupted: number };
  /** Statuses other than 200 the clients got, by status. */
  statuses: Record<string, number>;
  kills: number;
  /** The data dir, when kept. */
  keptDir?: string;
}

const TOKEN = "kill-trials-token-0123456789abcdef";

/**
 * Serves the clients from a real `sessiond serve` child, SIGKILLs it at a random moment and restarts it on
 * the same data, `kills` times; then lets the last one finish what it has and checks the stored data.
 */
export async function runTrials(options: TrialOptions): Promise<TrialReport> {
  const dir = mkdtempSync(join(tmpdir(), `sessiond-kill-${options.store}-`));
  const data: TrialData = {
    dir,
    store: options.store,
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
  };
  const model = await startEchoModel(options.modelDelayMs);
  const lives = new GatewayLives();
  const sent: SentInput[] = [];
  const recovered = { requeued: 0, answered: 0, interrupted: 0 };
  let gateway: TrialGateway | undefined;
  let keep = false;
  try {
    writeTrialConfig(data, model.baseUrl, options.leaseTtlMs);
    const clients = [
      ...Array.from({ length: options.chatClients }, (_, i) => chatClient(i, { token: TOKEN, lives, sent })),
      ...Array.from({ length: options.asyncClients ?? 0 }, (_, i) =>
        asyncClient(i, { token: TOKEN, lives, sent }),
      ),
      ...Array.from({ length: options.openAiClients }, (_, i) =>
        openAiClient(i, { named: i % 2 === 1, stream: i % 4 >= 2 }, { token: TOKEN, lives, sent }),
      ),
    ];
    for (let life = 0; life <= options.kills; life++) {
      gateway = await startTrialGateway(options.cli, data, TOKEN);
      lives.open(gateway.url);
      const last = life === options.kills;
      const [min, max] = options.upMs;
      if (last) {
        await sleep(options.lastUpMs);
        await eachAnswered(sent, clientCount(options), life + 1);
        break;
      }
      await sleep(min + Math.random() * (max - min));
      lives.close();
      await gateway.kill();
      addRecovery(recovered, gateway.output());
      options.log?.(`life ${life + 1}: killed after ${sent.length} inputs sent`);
    }
    lives.stop();
    await Promise.all(clients);
    if (!gateway) throw new Error("no gateway ran");
    await drained(gateway.url, Math.max(1000, 3 * (options.leaseTtlMs ?? 0)));
    await gateway.stop();
    addRecovery(recovered, gateway.output());
    const check = await checkStore(storeConfigOf(data), sent);
    const statuses: Record<string, number> = {};
    for (const input of sent) {
      if (input.status !== 200) statuses[input.status] = (statuses[input.status] ?? 0) + 1;
    }
    const lost = Object.values(check.drivers).reduce((n, c) => n + c.lost, 0);
    keep = options.keepOnFailure === true && check.doubles.length + lost > 0;
    return { ...check, recovered, statuses, kills: options.kills, ...(keep ? { keptDir: dir } : {}) };
  } finally {
    lives.stop();
    await gateway?.kill();
    await model.close();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

function clientCount(options: TrialOptions): number {
  return options.chatClients + (options.asyncClients ?? 0) + options.openAiClients;
}

/** Resolves once each client got an answer from the gateway of `life` (the last one works for all). */
async function eachAnswered(sent: readonly SentInput[], clients: number, life: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const answered = new Set(sent.filter((s) => s.life === life && s.acked).map((s) => s.client));
    if (answered.size >= clients) return;
    if (Date.now() > deadline) {
      throw new Error(`after 120 s the last gateway had answered ${answered.size} of ${clients} clients`);
    }
    await sleep(100);
  }
}

/** Adds up the `recovered inputs: …` line a gateway printed at start-up. */
function addRecovery(total: TrialReport["recovered"], output: string): void {
  const match = /recovered inputs: (\d+) queued again, (\d+) already answered, (\d+) interrupted/.exec(
    output,
  );
  if (!match) return;
  total.requeued += Number(match[1]);
  total.answered += Number(match[2]);
  total.interrupted += Number(match[3]);
}

/** Resolves once the gateway's queues stayed empty for `quietMs` (recovered inputs all ran). */
async function drained(url: string, quietMs: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  let emptySince: number | undefined;
  while (Date.now() < deadline) {
    const metrics = await (
      await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    const depth = Number(/^sessiond_queue_depth (\d+)/m.exec(metrics)?.[1] ?? "NaN");
    if (depth === 0) {
      emptySince ??= Date.now();
      if (Date.now() - emptySince >= quietMs) return;
    } else emptySince = undefined;
    await sleep(100);
  }
  throw new Error("the gateway's queues did not drain within 120 s");
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
