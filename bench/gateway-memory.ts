import { Agent } from "node:http";
import { join } from "node:path";
import { type Child, post, startServer } from "./gateway.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { below, fixed, int, ratioText } from "./report.js";
import { messageContents } from "./support.js";

export interface GatewayMemoryResult {
  turns: number;
  sessions: number;
  messageBytes: number;
  clients: number;
  /** The gateway's RSS once listening, MB: the baseline. */
  readyRssMb: number;
  /** Its peak RSS over the turns. */
  peakRssMb: number;
  /** Its RSS after the turns, once it has been idle for `IDLE_MS`. */
  idleRssMb: number;
  errors: number;
}

const TURNS = 400;
const MESSAGE_BYTES = 900_000;
const CLIENTS = 8;
const MAX_PEAK_MB = 400;
const MAX_IDLE_MB = 150;
/** How long the gateway is left without requests before its idle RSS is read. */
const IDLE_MS = 10_000;

async function run(ctx: BenchContext): Promise<GatewayMemoryResult> {
  const turns = ctx.quick ? TURNS / 4 : TURNS;
  const gateway: Child = await startServer(["gateway", join(ctx.dir, "memory.db"), ctx.dir]);
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const target = new URL(gateway.url);
  // One message a client, each turn on a session of its own; the contents differ so nothing is shared.
  let next = 0;
  let errors = 0;
  const client = async () => {
    for (;;) {
      const n = next++;
      if (n >= turns) return;
      const [message] = messageContents(1, MESSAGE_BYTES, n + 1);
      const status = await post(agent, target, JSON.stringify({ peer: `memory-${n}`, message }));
      if (status !== 200) errors++;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, () => client()));
  agent.destroy();
  const busy = await gateway.rss();
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const idle = await gateway.rss();
  await gateway.stop();
  return {
    turns,
    sessions: turns,
    messageBytes: MESSAGE_BYTES,
    clients: CLIENTS,
    readyRssMb: gateway.readyRssKb / 1024,
    peakRssMb: busy.maxRssKb / 1024,
    idleRssMb: idle.rssKb / 1024,
    errors,
  };
}

function rows(r: GatewayMemoryResult): Row[] {
  const errors = r.errors > 0 ? `, ${int(r.errors)} non-200` : "";
  const what = `${int(r.turns)} turns of ${fixed(r.messageBytes / 1e6, 1)} MB messages on ${int(r.sessions)} sessions`;
  return [
    {
      figure: `gateway peak RSS MB, ${what}${errors}`,
      value: fixed(r.peakRssMb, 0),
      baseline: fixed(r.readyRssMb, 0),
      ratio: ratioText(r.peakRssMb / r.readyRssMb),
      checks: [below(r.peakRssMb, MAX_PEAK_MB, `${MAX_PEAK_MB} MB`)],
    },
    {
      figure: `gateway RSS MB after ${IDLE_MS / 1000} s idle`,
      value: fixed(r.idleRssMb, 0),
      baseline: fixed(r.readyRssMb, 0),
      ratio: ratioText(r.idleRssMb / r.readyRssMb),
      checks: [below(r.idleRssMb, MAX_IDLE_MB, `${MAX_IDLE_MB} MB`)],
    },
  ];
}

/**
 * Memory bounded by bytes: a real gateway process (echo runtime, which repeats each message in its reply;
 * SQLite, strict) takes 400 turns of 0.9 MB messages from 8 keep-alive clients, each turn on a session of
 * its own. Baseline: the same process's RSS once listening.
 */
export const gatewayMemory: Bench<GatewayMemoryResult> = {
  name: `gateway memory, ${TURNS} turns of 0.9 MB messages (baseline: RSS when ready)`,
  run,
  rows,
};
