import { join } from "node:path";
import type { ChatType } from "../../model/envelope.js";
import type { Session } from "../../model/session.js";
import { type FileSystem, writeAll } from "./durable-fs.js";
import type { KnownIdentity } from "./session-file.js";

/**
 * A file's claim (`.sessiond/claims/{agent}_{sender}_{seq}`, which keeps its seq from being handed out
 * again) also holds whose file it is: CrabTalk rewrites the metadata line when it retitles a file and drops
 * sessiond's fields from it, and the claim, named by the part of the name that survives the rename, still
 * says the key, session id, generation and creation time. Written once, right after the claim is created;
 * a claim left empty or torn by a crash says nothing, and the file then reads as CrabTalk's.
 */
export function writeClaimIdentity(fs: FileSystem, fd: number, session: Session): void {
  const identity: KnownIdentity = {
    id: session.id,
    key: session.key,
    generation: session.generation,
    agent: session.agent,
    channel: session.channel,
    createdBy: session.createdBy,
    createdAt: session.createdAt,
    ...(session.chatType !== undefined ? { chatType: session.chatType } : {}),
  };
  writeAll(fd, Buffer.from(JSON.stringify(identity)), 0, fs);
}

/** The identity a claim holds, if it holds a complete one. */
export function readClaimIdentity(
  fs: FileSystem,
  claimsDir: string,
  stem: string,
): KnownIdentity | undefined {
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(join(claimsDir, stem), "utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const strings = ["id", "key", "agent", "channel", "createdBy"].every((f) => typeof v[f] === "string");
  if (!strings || !Number.isSafeInteger(v.generation) || !Number.isSafeInteger(v.createdAt)) return undefined;
  return {
    id: v.id as string,
    key: v.key as string,
    generation: v.generation as number,
    agent: v.agent as string,
    channel: v.channel as string,
    createdBy: v.createdBy as string,
    createdAt: v.createdAt as number,
    ...(typeof v.chatType === "string" ? { chatType: v.chatType as ChatType } : {}),
  };
}
