import { join } from "node:path";
import { createEngine, type Engine } from "../src/engine.js";
import { redactEnvelope } from "../src/secrets/index.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { webhookEnvelope as envelope } from "./gateway-store.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { fixed, int, ratioText } from "./report.js";
import { cpuBetween, cpuOf } from "./thread-cpu.js";

/**
 * Where the CPU of a gateway turn goes, without HTTP: `engine.turn` in this process (echo runtime, SQLite,
 * strict), with durable admission and without it, and the inbox on its own, each against the store's
 * own appends measured in the same run. A turn stores two entries (input and reply), so two appends are
 * the least it could cost; what is above them is the engine's own work.
 */
export interface TurnCpuResult {
  clients: number;
  turns: number;
  /** Main-thread CPU µs per append of one message, 50 concurrent writers: the baseline. */
  appendUs: number;
  turnUs: number;
  turnNoInboxUs: number;
  /** `engine.turn` on the memory store and inbox: the engine's own work, with no SQLite at all. */
  turnMemoryUs: number;
  /** One input admitted to the inbox and marked done, redaction included. */
  inboxUs: number;
}

const CLIENTS = 50;

/** `total` calls of `one(client, j)` from CLIENTS concurrent clients, each waiting for its last. */
async function drive(total: number, one: (client: number, j: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let j = 0; next++ < total; j++) await one(c, j);
    }),
  );
}

/** Main-thread CPU µs per call of a warmed-up pass. */
async function cpuPerCall(
  warmup: number,
  total: number,
  one: (client: number, j: number, pass: string) => Promise<unknown>,
): Promise<number> {
  await drive(warmup, (c, j) => one(c, j, "warm"));
  const before = cpuOf(process.pid);
  await drive(total, (c, j) => one(c, j, "run"));
  const used = cpuBetween(before, cpuOf(process.pid));
  return used ? (used.mainMs * 1000) / total : Number.NaN;
}

async function turnCpu(
  dir: string,
  store: "sqlite" | "memory",
  inbox: boolean,
  warmup: number,
  total: number,
): Promise<number> {
  const engine: Engine = await createEngine({
    dataDir: dir,
    store: store === "memory" ? { backend: "memory" } : { backend: "sqlite", path: join(dir, "turns.db") },
    ...(inbox ? {} : { turns: { inbox: false } }),
  });
  try {
    return await cpuPerCall(warmup, total, (c, j, pass) =>
      engine.turn(envelope(`${pass}-${c}`, `hello from client ${c}, request ${j}`)),
    );
  } finally {
    await engine.close();
  }
}

async function run(ctx: BenchContext): Promise<TurnCpuResult> {
  const warmup = ctx.quick ? 1_000 : 3_000;
  const turns = ctx.quick ? 4_000 : 20_000;
  const init = { agent: "main", channel: "webhook", chatType: "direct" as const, createdBy: "bench" };

  const store = new SqliteStore({ path: join(ctx.dir, "appends.db") });
  const inbox = store.inbox();
  let appendUs: number;
  let inboxUs: number;
  try {
    appendUs = await cpuPerCall(warmup, turns, (c, j, pass) =>
      store.append(
        `agent:main:webhook:direct:${pass}-${c}`,
        [
          {
            type: "message",
            role: "user",
            content: `hello from client ${c}, request ${j}`,
            sender: { id: `${pass}-${c}` },
            idempotencyKey: `${pass}-${c}-${j}`,
          },
        ],
        { init },
      ),
    );
    let id = 0;
    inboxUs = await cpuPerCall(warmup, turns, async (c, j, pass) => {
      const itemId = String(++id).padStart(26, "0");
      const admitted = await inbox.admit({
        id: itemId,
        key: `agent:main:webhook:direct:${pass}-${c}`,
        envelope: redactEnvelope(envelope(`${pass}-${c}`, `hello from client ${c}, request ${j}`)),
        at: Date.now(),
      });
      void inbox.transition(admitted.item.id, "done", Date.now(), { sessionId: "s", replyId: "r" });
    });
  } finally {
    await inbox.close();
    await store.close();
  }
  ctx.log(`  store: ${fixed(appendUs, 0)} µs per append, inbox: ${fixed(inboxUs, 0)} µs per input`);
  const turnUs = await turnCpu(join(ctx.dir, "with-inbox"), "sqlite", true, warmup, turns);
  ctx.log(`  engine.turn with durable admission: ${fixed(turnUs, 0)} µs`);
  const turnNoInboxUs = await turnCpu(join(ctx.dir, "without-inbox"), "sqlite", false, warmup, turns);
  ctx.log(`  engine.turn without it: ${fixed(turnNoInboxUs, 0)} µs`);
  const turnMemoryUs = await turnCpu(join(ctx.dir, "memory"), "memory", true, warmup, turns);
  ctx.log(`  engine.turn on the memory store and inbox: ${fixed(turnMemoryUs, 0)} µs`);
  return { clients: CLIENTS, turns, appendUs, turnUs, turnNoInboxUs, turnMemoryUs, inboxUs };
}

function rows(r: TurnCpuResult): Row[] {
  const row = (figure: string, us: number): Row => ({
    figure,
    value: fixed(us, 0),
    baseline: fixed(r.appendUs, 0),
    ratio: ratioText(us / r.appendUs),
    checks: [],
  });
  return [
    row(
      `main-thread CPU µs per engine.turn, ${r.clients} clients, ${int(r.turns)} turns (echo, strict, inbox)`,
      r.turnUs,
    ),
    row("the same with turns.inbox false", r.turnNoInboxUs),
    row("the same on the memory store and inbox (no SQLite: the engine's own work)", r.turnMemoryUs),
    row("one input admitted to the inbox and marked done", r.inboxUs),
  ];
}

/**
 * The engine's CPU per turn without HTTP, beside the store's CPU per append (`--only gateway` gives the
 * figure over HTTP against a bare handler; the difference between the two is the gateway's own).
 */
export const turnCpuBench: Bench<TurnCpuResult> = {
  name: "engine.turn CPU in-process (baseline: one store append of the same message)",
  run,
  rows,
};
