// The memory bench's workload against a built checkout, with the gateway's heap, RSS and event-loop use each second of
// idle. Run: node scripts/profile/gateway-idle-memory.mjs <checkout> [turns=100] [idleMs=10000] [-- node flags]
// Env: PROF=1 profiles the idle phase (idle.cpuprofile in the cwd), LOWMEM=1 runs V8's low-memory GC at the end,
// TRIM=1 calls malloc_trim(0) in the gateway through gdb.
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const args = process.argv.slice(2);
const dd = args.indexOf("--");
const flags = dd >= 0 ? args.slice(dd + 1) : [];
const [root, turnsArg, idleArg] = dd >= 0 ? args.slice(0, dd) : args;
const rootDir = resolve(root ?? ".");
const turns = Number(turnsArg ?? 100),
  idleMs = Number(idleArg ?? 10000);
const { post } = await import(`${rootDir}/dist/bench/gateway.js`);
const { messageContents } = await import(`${rootDir}/dist/bench/support.js`);
const dir = mkdtempSync(join(tmpdir(), "memexp-"));
const child = fork(new URL("./gateway-idle-memory-server.mjs", import.meta.url), [rootDir, dir], {
  execArgv: flags,
  stdio: ["ignore", "inherit", "inherit", "ipc"],
  env: process.env,
});
const ask = (type) =>
  new Promise((r) => {
    child.once("message", r);
    child.send({ type });
  });
const ready = await new Promise((r) => child.once("message", r));
const f = (m) =>
  `elu ${(m.elu ?? 0).toFixed(2)} rss ${m.rss.toFixed(0)} max ${m.maxRss.toFixed(0)} heapT ${m.heapTotal.toFixed(0)} used ${m.heapUsed.toFixed(0)} ext ${m.external.toFixed(0)} ab ${m.ab.toFixed(0)} anon ${m.anon.toFixed(0)} ${JSON.stringify(m.spaces)}`;
console.log("ready", f(ready));
const agent = new Agent({ keepAlive: true, maxSockets: 8 });
const url = new URL(ready.url);
let next = 0;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    for (;;) {
      const n = next++;
      if (n >= turns) return;
      const [message] = messageContents(1, 900_000, n + 1);
      const s = await post(agent, url, JSON.stringify({ peer: `memory-${n}`, message }));
      if (s !== 200) console.log("status", s);
    }
  }),
);
agent.destroy();
console.log("busy ", f(await ask("mem")));
if (process.env.PROF) await ask("profstart");
for (let t = 0; t < idleMs; t += 1000) {
  await new Promise((r) => setTimeout(r, 1000));
  console.log(`idle${t + 1000}`, f(await ask("mem")));
}
if (process.env.PROF) await ask("profstop");
if (flags.includes("--expose-gc")) {
  console.log("gc   ", f(await ask("gc")));
  await new Promise((r) => setTimeout(r, 3000));
  console.log("gc+3s", f(await ask("mem")));
}
if (process.env.LOWMEM) {
  const m = await ask("lowmem");
  console.log(`lowmem ${m.ms.toFixed(0)} ms`, f(m));
  await new Promise((r) => setTimeout(r, 2000));
  console.log("lowm+2s", f(await ask("mem")));
}
if (process.env.TRIM) {
  const { execFileSync } = await import("node:child_process");
  console.log(
    execFileSync("gdb", ["-p", String(child.pid), "-batch", "-ex", "call (int)malloc_trim(0)"], {
      encoding: "utf8",
    })
      .split("\n")
      .filter((l) => l.startsWith("$"))
      .join(" "),
  );
  console.log("trim ", f(await ask("mem")));
}
child.send({ type: "stop" });
rmSync(dir, { recursive: true, force: true });
