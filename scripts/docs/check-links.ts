/**
 * Every link of README.md and docs/ resolves: a relative link names a file or directory that exists, and
 * its `#anchor` (or a `#anchor` alone) is a heading of the page it points at, as GitHub spells anchors.
 * Links to other sites are not fetched. `tsx scripts/docs/check-links.ts` prints one line per broken
 * link (file:line) and exits 1 when there is one.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** The README and every Markdown file under docs/, relative to `root`. */
export function documentationFiles(root: string): string[] {
  const files = existsSync(join(root, "README.md")) ? ["README.md"] : [];
  const walk = (dir: string) => {
    if (!existsSync(join(root, dir))) return;
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) files.push(path);
    }
  };
  walk("docs");
  return files;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6} (.*)$/.exec(line.text)?.[1];
    if (heading === undefined) continue;
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The lines outside fenced code blocks, with their numbers. */
function proseLines(markdown: string): Array<{ text: string; number: number }> {
  const lines: Array<{ text: string; number: number }> = [];
  let fenced = false;
  markdown.split("\n").forEach((text, i) => {
    if (/^\s*```/.test(text)) fenced = !fenced;
    else if (!fenced) lines.push({ text, number: i + 1 });
  });
  return lines;
}

/** `[text](target)` and `![alt](target)`, outside code spans. */
function linksIn(line: string): string[] {
  const prose = line.replace(/`[^`]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string);
}

export function checkLinks(root: string): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsAt = (file: string) => {
    let anchors = anchorCache.get(file);
    if (!anchors) {
      anchors = anchorsOf(readFileSync(file, "utf8"));
      anchorCache.set(file, anchors);
    }
    return anchors;
  };
  for (const file of documentationFiles(root)) {
    const path = join(root, file);
    for (const { text, number } of proseLines(readFileSync(path, "utf8"))) {
      for (const target of linksIn(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const [pathPart = "", anchor] = target.split("#", 2);
        const to = pathPart === "" ? path : resolve(dirname(path), decodeURI(pathPart));
        const report = (reason: string) => broken.push({ file, line: number, target, reason });
        if (!existsSync(to)) {
          report(`${relative(root, to)} does not exist`);
          continue;
        }
        if (anchor === undefined || anchor === "") continue;
        if (statSync(to).isDirectory() || !to.endsWith(".md")) {
          report(`an anchor into ${relative(root, to)}, which is not a Markdown page`);
        } else if (!anchorsAt(to).has(anchor)) {
          report(`${relative(root, to)} has no heading #${anchor}`);
        }
      }
    }
  }
  return broken;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const broken = checkLinks(root);
  for (const b of broken) process.stderr.write(`${b.file}:${b.line}: ${b.target}: ${b.reason}\n`);
  process.exit(broken.length === 0 ? 0 : 1);
}
