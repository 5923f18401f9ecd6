import { lazyModule } from "../model/load-sync.js";

// 230 kB of rules, loaded when a text first looks like it may hold a secret: most commands never need it.
const presetModule = lazyModule<{ rules: unknown }>("@secretlint/secretlint-rule-preset-recommend");
const presetRules = (): readonly RuleCreator[] => presetModule().rules as readonly RuleCreator[];

/** The little of secretlint's rule context that the preset's scanners use. */
interface RuleContext {
  createTranslator: () => (id: string) => string;
  report: (descriptor: { range?: readonly [number, number] }) => void;
  ignore: () => void;
}

interface RuleSource {
  content: string;
  ext: string;
  contentType: "text";
}

interface RuleCreator {
  meta: { id: string; type?: string };
  create: (
    context: RuleContext,
    options: Record<string, never>,
  ) => { file?: (source: RuleSource) => unknown };
}

// Not a scanner: it reads `secretlint-disable` comments, which must not switch redaction off.
const SKIPPED = new Set(["@secretlint/secretlint-rule-filter-comments"]);

// The words (lowercase) at least one of which every match of a rule holds, read from the rules' patterns in
// 13.1.0: a text without any skips the rule. A rule not listed here (a newer version's) always runs.
const RULE_WORDS: Readonly<Record<string, readonly string[]>> = {
  aws: ["access"],
  gcp: ["private_key"],
  privatekey: ["private key"],
  npm: ["npm_", "_authtoken"],
  basicauth: ["://"],
  slack: ["xox", "xapp", "hooks.slack.com"],
  sendgrid: ["sg."],
  shopify: ["shp"],
  stripe: ["sk_", "rk_"],
  github: ["gh", "github_pat_", "x-oauth-basic"],
  gitlab: ["glpat-"],
  grafana: ["glc_", "glsa_"],
  openai: ["sk-"],
  anthropic: ["sk-ant-"],
  groq: ["gsk_"],
  huggingface: ["hf_"],
  linear: ["lin_api_"],
  notion: ["ntn_"],
  "1password": ["ops_"],
  "database-connection-string": ["mongodb", "mysql", "postgres"],
  "hashicorp-vault": ["hvs.", "hvb.", "hvr."],
  vercel: ["vcp_", "vci_", "vca_", "vcr_", "vck_"],
  databricks: ["dapi"],
  docker: ["dckr_pat_"],
  figma: ["figd_"],
  cloudflare: ["cfk_", "cfut_", "cfat_"],
  tailscale: ["tskey-"],
};
const RULE_PREFIX = "@secretlint/secretlint-rule-";

let reported: Array<readonly [number, number]> = [];
const context: RuleContext = {
  createTranslator: () => (id) => id,
  report: ({ range }) => {
    if (range) reported.push(range);
  },
  ignore: () => {},
};

interface Scanner {
  words: readonly string[] | undefined;
  file: (source: RuleSource) => unknown;
}

// The preset's rules keep their patterns inside their code: each is created once with this synchronous
// context, and its `file` handler reports the ranges it finds. Without a file path no rule reaches the
// asynchronous `.p12` check, so every report arrives before `file` returns.
let scanners: readonly Scanner[] | undefined;
function presetScanners(): readonly Scanner[] {
  scanners ??= presetRules()
    .filter((rule) => !SKIPPED.has(rule.meta.id))
    .map((rule) => ({
      words: RULE_WORDS[rule.meta.id.replace(RULE_PREFIX, "")],
      file: rule.create(context, {}).file,
    }))
    .filter((scanner): scanner is Scanner => typeof scanner.file === "function");
  return scanners;
}

/**
 * The ranges `[start, end)` of `text` where `@secretlint/secretlint-rule-preset-recommend` finds a secret.
 * A range starts at or before its secret but may end early (the AWS rule reports the length of the value
 * from the start of its key name), so callers widen it to the end of the token. `lower` is `text` lowercased.
 */
export function presetSecretRanges(text: string, lower: string): Array<readonly [number, number]> {
  reported = [];
  const source: RuleSource = { content: text, ext: "", contentType: "text" };
  for (const { words, file } of presetScanners()) {
    if (words === undefined || words.some((word) => lower.includes(word))) file(source);
  }
  const found = reported;
  reported = [];
  return found;
}

/** How many of the preset's scanners run (for the README's and the tests' sake). */
export function presetScannerCount(): number {
  return presetScanners().length;
}

/** The preset's scanners that run on every candidate text, for want of words to look for first. */
export function ungatedPresetRules(): string[] {
  return presetRules()
    .map((rule) => rule.meta.id)
    .filter((id) => !SKIPPED.has(id) && RULE_WORDS[id.replace(RULE_PREFIX, "")] === undefined);
}
