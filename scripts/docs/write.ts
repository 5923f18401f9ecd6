/**
 * `npm run docs`: rewrites the generated parts of the references (docs/reference/cli.md,
 * configuration.md and http.md) from the code; `--check` only says whether they are current (exit 1 when not).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { generatedSections } from "./generate.js";
import { GENERATED_SECTIONS, SECTION_FILES, withSection } from "./readme-sections.js";

const root = new URL("../../", import.meta.url);
const sections = await generatedSections();
let stale = false;
for (const name of GENERATED_SECTIONS) {
  const file = fileURLToPath(new URL(SECTION_FILES[name], root));
  const before = readFileSync(file, "utf8");
  const after = withSection(before, name, sections[name]);
  if (after === before) continue;
  stale = true;
  if (!process.argv.includes("--check")) {
    writeFileSync(file, after);
    process.stdout.write(`${SECTION_FILES[name]}: generated part updated\n`);
  }
}
if (stale && process.argv.includes("--check")) {
  process.stderr.write("the generated references are stale: run npm run docs\n");
  process.exit(1);
}
