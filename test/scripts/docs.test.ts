import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cliReference } from "../../scripts/docs/cli-reference.js";
import { generatedSections } from "../../scripts/docs/generate.js";
import { GENERATED_SECTIONS, SECTION_FILES, sectionOf } from "../../scripts/docs/readme-sections.js";

const pageOf = (name: (typeof GENERATED_SECTIONS)[number]) =>
  readFileSync(fileURLToPath(new URL(`../../${SECTION_FILES[name]}`, import.meta.url)), "utf8");

const current = await generatedSections();

describe("the generated references (docs/reference/)", () => {
  for (const name of GENERATED_SECTIONS) {
    it(`the ${name} reference is what the code says (npm run docs rewrites it)`, () => {
      expect(sectionOf(pageOf(name), name)).toBe(current[name]);
    });
  }

  it("lists every command and option commander knows, so a new one shows up as drift", async () => {
    const reference = await cliReference();
    for (const usage of [
      "sessiond sessions list [options]",
      "sessiond serve [options]",
      "sessiond agents duplicate",
    ]) {
      expect(reference).toContain(usage);
    }
    expect(reference).toContain("--data-dir <dir>");
    expect(reference).not.toContain("--help");
  });

  it("lists every key of the config schema with its allowed values", () => {
    const { config } = current;
    expect(config).toContain("| `session.reset.mode` | off \\| daily \\| idle |");
    expect(config).toContain("| `store.commit_interval_ms` | integer ≥ 0 ≤ 1000 |");
    expect(config).toContain(
      "| `models.<name>.api_key_env` | string | The environment variable holding the key",
    );
  });
});
