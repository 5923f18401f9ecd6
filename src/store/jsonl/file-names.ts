import { createHash } from "node:crypto";
import { crabtalkSlug } from "../../keys/file-names.js";
import { redactSecrets } from "../../secrets/index.js";
import { isSealedTitle } from "../encryption/sealed-entries.js";

const SLUG_MAX = 64;
const TITLE_SLUG_MAX = 60;

/**
 * CrabTalk's names: `{agent}_{sender_slug}_{seq}.jsonl`, `{agent}_{sender_slug}_{seq}_{title_slug}.jsonl`
 * once titled. The slugs are CrabTalk's `sender_slug` (letters, digits, `-`), so a name can never hold a
 * path separator, a dot segment or `_` inside a part; parts are cut so a name stays far below 255 bytes.
 */
export interface FileFamily {
  /** `{agent}_{sender}`: the part before `_{seq}`. */
  prefix: string;
  /** The sender CrabTalk looks the family up by (the metadata line's `created_by`). */
  sender: string;
}

/**
 * The family of a key's files. The agent is written as is, as CrabTalk looks it up, when it is 1–64 ASCII
 * letters, digits or `-` (`_` would make names ambiguous to CrabTalk's prefix match) and holds no secret;
 * otherwise its slug (`agent` if empty), under which CrabTalk does not find it. A key of the `crabtalk` scope
 * (`{agent}:{created_by}`) is CrabTalk's own family, `{agent}_{sender_slug(created_by)}`; any other key's sender
 * part also carries 48 bits of sha256(key), so distinct keys of one sender (`telegram:42`, `whatsapp:42`)
 * never share a family, which CrabTalk would read as one conversation.
 */
export function fileFamily(agent: string, createdBy: string, key: string): FileFamily {
  const asIs = SAFE_AGENT.test(agent) && redactSecrets(agent) === agent;
  const agentPart = asIs ? agent : crabtalkSlug(agent).slice(0, SLUG_MAX) || "agent";
  const senderSlug = crabtalkSlug(createdBy).slice(0, SLUG_MAX);
  const own = key === `${agent}:${createdBy}`;
  const sender = own ? createdBy : [senderSlug, keyHash(key)].filter((p) => p !== "").join("-");
  return { prefix: `${agentPart}_${own ? senderSlug : sender}`, sender };
}

const SAFE_AGENT = /^[A-Za-z0-9-]{1,64}$/;

function keyHash(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex").slice(0, 12);
}

export function sessionFileName(prefix: string, seq: number, title = ""): string {
  // An encrypted store's titles are sealed: its file names carry none (CrabTalk's rename on retitle is off).
  const titleSlug = isSealedTitle(title)
    ? ""
    : crabtalkSlug(title).slice(0, TITLE_SLUG_MAX).replace(/-+$/, "");
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
