import { createRequire } from "node:module";
import type * as Yaml from "yaml";
import type { ConfigProblem } from "./references.js";

/**
 * Each problem with the line of the YAML it is about (the nearest enclosing key that exists when the key
 * itself is missing), so a reader can jump to it. Problems keep their order; a path the text cannot place
 * (`(top level)`, an environment variable) gets no line.
 */
export function withLines(text: string, problems: readonly ConfigProblem[]): ConfigProblem[] {
  if (problems.length === 0) return [];
  // Loaded on this error path only, as load.ts does: yaml is 74 modules.
  const { isNode, LineCounter, parseDocument } = createRequire(import.meta.url)("yaml") as typeof Yaml;
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  return problems.map((problem) => {
    const segments = problem.path.split(".").map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    for (let length = segments.length; length > 0; length--) {
      const node: unknown = doc.getIn(segments.slice(0, length), true);
      if (isNode(node) && node.range) {
        return { ...problem, line: counter.linePos(node.range[0]).line };
      }
    }
    return problem;
  });
}
