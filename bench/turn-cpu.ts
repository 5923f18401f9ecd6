import { createHook } from "node:async_hooks";
import { join } from "node:path";
import { routingConfigOf } from "../src/config/routing.js";
import { createEngine, type Engine } from "../src/engine.js";
import { routeEnvelope } from "../src/keys/route.js";
import { echoRuntime } from "../src/runtimes/echo.js";
import { redactEnvelope } from "../src/secrets/index.js";
import { MemoryStore } from "../src/store/memory/memory-store.js";
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
  /** The least a turn on the memory store could cost: route, append the input, load the context, append the reply. */
  coreMemoryUs: number;
  /** Promises created per `engine.turn` on the memory store (async_hooks, one client, sequential). */
  promisesPerTurn: number;
  /** Of those, what the echo runtime's own stream makes (the runtime, not the turn machinery). */
  echoPromisesPerRun: number;
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

/** Route + input append + context load + reply append on the memory store: a turn's store work alone. */
async function coreCpu(warmup: number, total: number): Promise<number> {
  const store = new MemoryStore();
  const routing = routingConfigOf({});
  try {
    return await cpuPerCall(warmup, total, async (c, j, pass) => {
      const text = `hello from client ${c}, request ${j}`;
      const route = routeEnvelope(envelope(`${pass}-${c}`, text), routing);
      const init = {
        agent: route.agent,
        channel: "webhook",
        chatType: "direct" as const,
        createdBy: "bench",
      };
      await store.append(route.key, [{ type: "message", role: "user", content: text }], { init });
      await store.loadContext(route.key);
      await store.append(route.key, [{ type: "message", role: "assistant", content: text }]);
    });
  } finally {
    await store.close();
  }
}

/** Promises made per turn: counted with async_hooks over sequential turns on the memory store. */
async function promisesPerTurn(dir: string, total: number): Promise<number> {
  const engine = await createEngine({ dataDir: dir, store: { backend: "memory" } });
  try {
    for (let j = 0; j < 100; j++) await engine.turn(envelope(`warm-${j % 10}`, `hello ${j}`));
    let promises = 0;
    const hook = createHook({
      init(_id, type) {
        if (type === "PROMISE") promises++;
      },
    }).enable();
    for (let j = 0; j < total; j++) await engine.turn(envelope(`count-${j % 10}`, `hello ${j}`));
    hook.disable();
    return promises / total;
  } finally {
    await engine.close();
  }
}

/** Promises the echo runtime's own stream makes per run (its deltas read with `for await`, as a turn reads them). */
async function echoStreamPromises(total: number): Promise<number> {
  const echo = echoRuntime();
  const run = {
    key: "k",
    agent: "main",
    messages: [],
    input: "hello",
    session: { id: "s", entryCount: 1, approxTokens: 1 },
    signal: new AbortController().signal,
  };
  let promises = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === "PROMISE") promises++;
    },
  }).enable();
  for (let j = 0; j < total; j++) for await (const _event of echo.run(run)) void _event;
  hook.disable();
  return promises / total;
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
  const coreMemoryUs = await coreCpu(warmup, turns);
  ctx.log(`  route + 2 appends + context load on the memory store: ${fixed(coreMemoryUs, 0)} µs`);
  const promises = await promisesPerTurn(join(ctx.dir, "promises"), ctx.quick ? 500 : 2_000);
  const echoPromises = await echoStreamPromises(ctx.quick ? 500 : 2_000);
  ctx.log(`  promises per engine.turn (memory store): ${fixed(promises, 1)}`);
  return {
    clients: CLIENTS,
    turns,
    appendUs,
    turnUs,
    turnNoInboxUs,
    turnMemoryUs,
    inboxUs,
    coreMemoryUs,
    promisesPerTurn: promises,
    echoPromisesPerRun: echoPromises,
  };
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
    {
      figure:
        "engine.turn on the memory store against its core's route + 2 appends + context load (target ≤ 130 µs; 219–463 µs when issue 28 was filed)",
      value: fixed(r.turnMemoryUs, 0),
      baseline: fixed(r.coreMemoryUs, 0),
      ratio: ratioText(r.turnMemoryUs / r.coreMemoryUs),
      checks: [],
    },
    {
      figure: "promises per engine.turn on the memory store (target ≤ 40; 124 when issue 28 was filed)",
      value: fixed(r.promisesPerTurn, 1),
      baseline: "",
      ratio: "",
      checks: [],
    },
    {
      figure: "  of which the echo runtime's own stream (3 deltas read with for await)",
      value: fixed(r.echoPromisesPerRun, 1),
      baseline: "",
      ratio: "",
      checks: [],
    },
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
