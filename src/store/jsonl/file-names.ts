import { crabtalkSlug } from "../../keys/file-names.js";

const SLUG_MAX = 64;
const TITLE_SLUG_MAX = 60;

/**
 * CrabTalk's names: `{agent}_{sender_slug}_{seq}.jsonl`, `{agent}_{sender_slug}_{seq}_{title_slug}.jsonl`
 * once titled. Every part is a CrabTalk slug (letters, digits, `-`), so a name can never hold a path
 * separator, a dot segment or `_` inside a part; parts are cut so a name stays far below 255 bytes.
 */
export function pairPrefix(agent: string, createdBy: string): string {
  const agentSlug = crabtalkSlug(agent).slice(0, SLUG_MAX) || "agent";
  return `${agentSlug}_${crabtalkSlug(createdBy).slice(0, SLUG_MAX)}`;
}

export function sessionFileName(prefix: string, seq: number, title = ""): string {
  const titleSlug = crabtalkSlug(title).slice(0, TITLE_SLUG_MAX).replace(/-+$/, "");
  return titleSlug === "" ? `${prefix}_${seq}.jsonl` : `${prefix}_${seq}_${titleSlug}.jsonl`;
}

const STEM = /^(.*_(\d+))(?:_[^_]*)?$/u;

/** The untitled part of a session file's name (`crab_user_3` of `crab_user_3_hello.jsonl`): stable across title renames. */
export function stemOf(fileName: string): string {
  const base = fileName.replace(/\.jsonl$/, "");
  return STEM.exec(base)?.[1] ?? base;
}

/** The `(prefix, seq)` a session file name holds, if it follows CrabTalk's pattern. */
export function parseStem(stem: string): { prefix: string; seq: number } | undefined {
  const match = /^(.*)_(\d+)$/u.exec(stem);
  if (!match) return undefined;
  return { prefix: match[1] ?? "", seq: Number(match[2]) };
}

export const isSessionFileName = (name: string) => name.endsWith(".jsonl") && !name.startsWith(".");
