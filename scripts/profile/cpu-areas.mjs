// Self time of a V8 .cpuprofile summed by area of the code: each sample goes to the area of the nearest
// frame on its stack that belongs to one (a SQLite call made by the search index is the search index's),
// and fsync waits and the garbage collector are areas of their own.
// Run: node scripts/profile/cpu-areas.mjs FILE [appends]   (with `appends`, also µs per append)
import { readFileSync } from "node:fs";

const AREAS = [
  ["fsync (waiting on the disk)", (f) => !f.url && /^f(data)?sync$/.test(f.functionName)],
  ["garbage collector", (f) => f.functionName === "(garbage collector)"],
  ["search index", (f) => /\/(store\/jsonl\/search-|store\/sqlite\/search-|search\/)/.test(f.url)],
  ["secret scrub", (f) => /\/src\/secrets\//.test(f.url)],
  ["jsonl driver", (f) => /\/src\/store\/jsonl\//.test(f.url)],
  ["log core (store/, model/)", (f) => /\/src\/(store|model)\//.test(f.url)],
  ["workload and other", (f) => /\/(bench|scripts)\//.test(f.url)],
];
const profile = JSON.parse(readFileSync(process.argv[2], "utf8"));
const appends = Number(process.argv[3] ?? 0);
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const area = new Map();
function areaOf(id) {
  if (area.has(id)) return area.get(id);
  const frame = nodes.get(id).callFrame;
  const found = AREAS.find(([, test]) => test(frame))?.[0];
  const name = found ?? (parent.has(id) ? areaOf(parent.get(id)) : frame.functionName || "other");
  area.set(id, name);
  return name;
}
const sums = new Map();
let total = 0;
profile.samples.forEach((id, i) => {
  const time = profile.timeDeltas[i] ?? 0;
  total += time;
  const name = areaOf(id);
  sums.set(name, (sums.get(name) ?? 0) + time);
});
console.log(`sampled ${(total / 1000).toFixed(0)} ms${appends ? ` over ${appends} appends` : ""}`);
for (const [name, time] of [...sums].sort((a, b) => b[1] - a[1])) {
  const perAppend = appends ? `  ${(time / appends).toFixed(1).padStart(6)} µs/append` : "";
  console.log(`${((100 * time) / total).toFixed(1).padStart(5)} %${perAppend}  ${name}`);
}
