// Writes every peer's fixture folder under test/import/fixtures/ (committed; the tests only read them):
//   npx tsx test/import/generators/main.ts
// The files follow peer-formats.md field by field; the zstd frames need the `zstd` tool (Debian `zstd`).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { writeCrabtalk } from "./crabtalk.js";
import { writeNanobot, writeNanobotFlat } from "./nanobot.js";
import { writeOpenclaw7, writeOpenclaw9 } from "./openclaw.js";
import { writePicoclaw } from "./picoclaw.js";
import { writeZeroclaw } from "./zeroclaw.js";

const root = join(import.meta.dirname, "..", "fixtures");
const writers: Record<string, (dir: string) => void> = {
  "openclaw-2026.7": writeOpenclaw7,
  "openclaw-2026.9": writeOpenclaw9,
  zeroclaw: writeZeroclaw,
  nanobot: writeNanobot,
  "nanobot-flat": writeNanobotFlat,
  picoclaw: writePicoclaw,
  crabtalk: writeCrabtalk,
};
for (const [name, write] of Object.entries(writers)) {
  const dir = join(root, name);
  rmSync(dir, { recursive: true, force: true });
  write(dir);
  console.log(`wrote ${dir}`);
}
