import { cliReference } from "./cli-reference.js";
import { configReference } from "./config-reference.js";
import { httpReference } from "./http-reference.js";
import type { GeneratedSection } from "./readme-sections.js";

/** What each generated README part holds now, from the code. */
export async function generatedSections(): Promise<Record<GeneratedSection, string>> {
  return { cli: await cliReference(), config: configReference(), http: httpReference() };
}
