import type { EntryInput, Role } from "./entry.js";
import { SessiondError } from "./errors.js";
import { lazySchema } from "./zod.js";

const ROLES: readonly Role[] = ["user", "assistant", "system", "tool"];
const roles: ReadonlySet<string> = new Set(ROLES);

/** Built on the first entry that needs it: commands that never append never load zod. */
const entryInput = lazySchema((z) => {
  const sender = z.object({ id: z.string().min(1), name: z.string().optional() });
  const part = z.object({
    kind: z.string().min(1),
    url: z.string().optional(),
    name: z.string().optional(),
    mimeType: z.string().optional(),
    text: z.string().optional(),
  });
  const toolCall = z.object({
    id: z.string(),
    name: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()),
  });
  const seq = z.number().int().min(1);
  const header = {
    ts: z.number().int().nonnegative().optional(),
    idempotencyKey: z.string().min(1).max(512).optional(),
  };

  const role = z.enum(ROLES as [Role, ...Role[]]);
  return z.discriminatedUnion("type", [
    z.object({
      ...header,
      type: z.literal("message"),
      role,
      content: z.string(),
      sender: sender.optional(),
      parts: z.array(part).optional(),
      toolCalls: z.array(toolCall).max(64).optional(),
      replyTo: z.string().optional(),
      toolCallId: z.string().optional(),
      autoInjected: z.literal(false).optional(),
    }),
    z.object({
      ...header,
      type: z.literal("compaction"),
      summary: z.string(),
      fromSeq: seq,
      throughSeq: seq,
      firstKeptSeq: seq,
      tokensBefore: z.number().int().nonnegative(),
      tokensAfter: z.number().int().nonnegative(),
      summarizer: z.string().min(1),
      model: z.string().optional(),
    }),
    z.object({
      ...header,
      type: z.literal("reset"),
      cause: z.enum(["trigger", "daily", "idle", "manual", "api", "relink", "client", "rewind"]),
      nextSessionId: z.string().optional(),
    }),
    z.object({ ...header, type: z.literal("title"), title: z.string().max(200), by: z.string().optional() }),
    z.object({
      ...header,
      type: z.literal("note"),
      text: z.string(),
      level: z.enum(["info", "warn", "error"]).optional(),
      code: z.string().optional(),
    }),
    z.object({
      ...header,
      type: z.literal("usage"),
      model: z.string().optional(),
      inputTokens: z.number().int().nonnegative().optional(),
      outputTokens: z.number().int().nonnegative().optional(),
      costUsd: z.number().nonnegative().optional(),
    }),
  ]);
});

/** The fields a message the turn pipeline builds may have besides its type, role and content. */
const PLAIN_EXTRAS: ReadonlySet<string> = new Set(["sender", "replyTo", "idempotencyKey", "ts"]);

/**
 * The most common inputs, checked without the schema (whose parse allocates about a kilobyte): a message of
 * a type, a role, a content and at most a sender, `replyTo`, `idempotencyKey` and `ts` (what a turn stores),
 * each of the schema's own kind. Gives the same entry the schema gives, or undefined for the schema to check
 * (anything else, an unknown or undefined field included).
 */
function plainMessage(input: unknown): EntryInput | undefined {
  if (typeof input !== "object" || input === null || Object.getPrototypeOf(input) !== Object.prototype)
    return undefined;
  const fields = input as Record<string, unknown>;
  const { type, role, content } = fields;
  if (type !== "message" || typeof role !== "string" || !roles.has(role) || typeof content !== "string")
    return undefined;
  const entry: Record<string, unknown> = { type, role, content };
  for (const key in fields) {
    if (key === "type" || key === "role" || key === "content") continue;
    if (!PLAIN_EXTRAS.has(key)) return undefined;
    const value = fields[key];
    if (key === "sender") {
      const sender = plainSender(value);
      if (!sender) return undefined;
      entry.sender = sender;
      continue;
    }
    if (key === "ts" ? !isTimestamp(value) : !isKeyText(value, key === "idempotencyKey")) return undefined;
    entry[key] = value;
  }
  return entry as unknown as EntryInput;
}

function plainSender(value: unknown): { id: string; name?: string } | undefined {
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype)
    return undefined;
  const { id, name } = value as Record<string, unknown>;
  if (typeof id !== "string" || id.length === 0) return undefined;
  let keys = 0;
  for (const _ in value) keys++;
  if (name === undefined) return keys === 1 ? { id } : undefined;
  return typeof name === "string" && keys === 2 ? { id, name } : undefined;
}

function isTimestamp(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** `replyTo` is any string; `idempotencyKey` 1 to 512 characters. */
function isKeyText(value: unknown, bounded: boolean): boolean {
  return typeof value === "string" && (!bounded || (value.length >= 1 && value.length <= 512));
}

/** Checks an entry a caller wants to append; throws INVALID_ENTRY naming the field. Unknown fields are dropped. */
export function parseEntryInput(input: unknown): EntryInput {
  const plain = plainMessage(input);
  if (plain) return plain;
  const result = entryInput().safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue?.path.length ? issue.path.join(".") : "entry";
    throw new SessiondError("INVALID_ENTRY", `invalid entry: ${path}: ${issue?.message ?? "invalid"}`, {
      details: { path },
    });
  }
  const entry = result.data as EntryInput;
  if (
    entry.type === "compaction" &&
    !(entry.fromSeq <= entry.throughSeq && entry.throughSeq < entry.firstKeptSeq)
  ) {
    throw new SessiondError(
      "INVALID_ENTRY",
      "invalid compaction: expected fromSeq <= throughSeq < firstKeptSeq",
    );
  }
  return entry;
}
