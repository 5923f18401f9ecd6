import type { EntryInput, ToolCall } from "../model/entry.js";
import type { Envelope, Part } from "../model/envelope.js";
import { isCredentialKey } from "./credential-keys.js";
import { redactSecrets } from "./redact.js";

const MAX_DEPTH = 32;

/**
 * A JSON-like value with secrets scrubbed from every string (keys included) and credential-named keys
 * (`password`, `api_key`, `…token`) left out at any depth. Returns a copy; deeper than 32 levels is `null`.
 */
export function redactJson(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactSecrets(value);
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return null;
  if (Array.isArray(value)) return value.map((item) => redactJson(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (!isCredentialKey(key)) out[redactSecrets(key)] = redactJson(item, depth + 1);
  }
  return out;
}

function redactPart(part: Part): void {
  if (part.text !== undefined) part.text = redactSecrets(part.text);
  if (part.url !== undefined) part.url = redactSecrets(part.url);
  if (part.name !== undefined) part.name = redactSecrets(part.name);
}

/**
 * A copy of an inbound message with its free text scrubbed as its user entry will be (text, sender name,
 * parts), and the client's own earlier messages too: what the inbox keeps. Ids and the entry point stay as
 * they are, so it routes the same.
 */
export function redactEnvelope(envelope: Envelope): Envelope {
  const { sender, parts, clientHistory, entryPoint } = envelope;
  const copy: Envelope = {
    ...envelope,
    chat: { ...envelope.chat },
    sender: sender.name === undefined ? { ...sender } : { ...sender, name: redactSecrets(sender.name) },
    text: redactSecrets(envelope.text),
  };
  if (entryPoint) copy.entryPoint = { ...entryPoint };
  if (parts) {
    copy.parts = parts.map((part) => {
      const scrubbed = { ...part };
      redactPart(scrubbed);
      return scrubbed;
    });
  }
  if (clientHistory) {
    copy.clientHistory = clientHistory.map((m) => ({ role: m.role, content: redactSecrets(m.content) }));
  }
  return copy;
}

function redactToolCall(call: ToolCall): void {
  call.name = redactSecrets(call.name);
  call.arguments = redactJson(call.arguments) as Record<string, unknown>;
}

/**
 * Scrubs every free-text field of an entry about to be stored, in place: the input must be the store's
 * own copy (parseEntryInput's). Tool-call arguments are replaced by scrubbed copies, since their nested
 * values may still be the caller's.
 */
export function redactEntryInput(input: EntryInput): void {
  switch (input.type) {
    case "message":
      input.content = redactSecrets(input.content);
      if (input.sender?.name !== undefined) input.sender.name = redactSecrets(input.sender.name);
      if (input.parts) for (const part of input.parts) redactPart(part);
      if (input.toolCalls) for (const call of input.toolCalls) redactToolCall(call);
      break;
    case "compaction":
      input.summary = redactSecrets(input.summary);
      break;
    case "title":
      input.title = redactSecrets(input.title);
      break;
    case "note":
      input.text = redactSecrets(input.text);
      break;
    case "usage":
      if (input.model !== undefined) input.model = redactSecrets(input.model);
      break;
    case "reset":
      break;
  }
}
