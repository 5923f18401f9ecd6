// Self time by function and by file in a V8 .cpuprofile (node --cpu-prof).
// Run: node scripts/profile/cpu-summary.mjs FILE [rows]
import { readFileSync } from "node:fs";

const profile = JSON.parse(readFileSync(process.argv[2], "utf8"));
const rows = Number(process.argv[3] ?? 35);
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const sampled = new Map();
profile.samples.forEach((id, i) => {
  sampled.set(id, (sampled.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
let total = 0;
for (const time of sampled.values()) total += time;
const byFunction = new Map();
const byFile = new Map();
const add = (map, key, time) => map.set(key, (map.get(key) ?? 0) + time);
for (const [id, time] of sampled) {
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  const file = url.replace(/^file:\/\//, "").replace(`${process.cwd()}/`, "");
  add(byFunction, `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`, time);
  add(byFile, file || functionName, time);
}
const print = (title, map) => {
  console.log(`--- ${title}`);
  for (const [key, time] of [...map].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
    console.log(`${((100 * time) / total).toFixed(1).padStart(5)} % ${key}`);
  }
};
console.log(`sampled ${(total / 1000).toFixed(0)} ms`);
print("self time by function", byFunction);
print("self time by file", byFile);
