/**
 * `npm run docs`: rewrites README.md's generated parts (the CLI and configuration references) from the
 * code; `--check` only says whether they are current (exit 1 when not).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { generatedSections } from "./generate.js";
import { GENERATED_SECTIONS, withSection } from "./readme-sections.js";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));
const before = readFileSync(README, "utf8");
const sections = await generatedSections();
const after = GENERATED_SECTIONS.reduce((text, name) => withSection(text, name, sections[name]), before);
if (process.argv.includes("--check")) {
  if (after !== before) {
    process.stderr.write("README.md's generated parts are stale: run npm run docs\n");
    process.exit(1);
  }
} else if (after !== before) {
  writeFileSync(README, after);
  process.stdout.write("README.md: generated parts updated\n");
}
