import { rules as presetRules } from "@secretlint/secretlint-rule-preset-recommend";

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

let reported: Array<readonly [number, number]> = [];
const context: RuleContext = {
  createTranslator: () => (id) => id,
  report: ({ range }) => {
    if (range) reported.push(range);
  },
  ignore: () => {},
};

// The preset's rules keep their patterns inside their code: each is created once with this synchronous
// context, and its `file` handler reports the ranges it finds. Without a file path no rule reaches the
// asynchronous `.p12` check, so every report arrives before `file` returns.
const scanners = (presetRules as unknown as readonly RuleCreator[])
  .filter((rule) => !SKIPPED.has(rule.meta.id))
  .map((rule) => rule.create(context, {}).file)
  .filter((file): file is NonNullable<typeof file> => typeof file === "function");

/**
 * The ranges `[start, end)` of `text` where `@secretlint/secretlint-rule-preset-recommend` finds a secret.
 * A range starts at or before its secret but may end early (the AWS rule reports the length of the value
 * from the start of its key name), so callers widen it to the end of the token.
 */
export function presetSecretRanges(text: string): Array<readonly [number, number]> {
  reported = [];
  const source: RuleSource = { content: text, ext: "", contentType: "text" };
  for (const file of scanners) file(source);
  const found = reported;
  reported = [];
  return found;
}

/** How many of the preset's scanners run (for the README's and the tests' sake). */
export const PRESET_SCANNERS = scanners.length;
