import { parseResetTrigger } from "../lifecycle/triggers.js";
import type { Entry } from "../model/entry.js";
import type { ClientMessage } from "../model/envelope.js";
import { parseQueueCommand } from "../model/queue.js";
import type { SessionInit } from "../model/session.js";
import { redactSecrets } from "../secrets/index.js";
import type { Store } from "../store/store.js";

/**
 * Whether a client's own copy of the conversation (the messages before its new input) continues the
 * stored kept context: after normalisation, the stored user/assistant messages must be the tail of the
 * client's. The client may hold more (what a compaction summarised, earlier generations, bare reset
 * triggers), never less or different. An empty kept context is continued by anything: there is nothing
 * to mix with.
 */
export function continuesStored(
  kept: readonly Readonly<Entry>[],
  client: readonly ClientMessage[],
  resetTriggers: readonly string[],
): boolean {
  const stored = answered(storedMessages(kept));
  if (stored.length === 0) return true;
  const theirs = answered(clientMessages(client, resetTriggers));
  if (theirs.length < stored.length) return false;
  const offset = theirs.length - stored.length;
  return stored.every((mine, i) => sameMessage(mine, theirs[offset + i] as ClientMessage));
}

function storedMessages(kept: readonly Readonly<Entry>[]): ClientMessage[] {
  const out: ClientMessage[] = [];
  for (const entry of kept) {
    if (entry.type !== "message") continue;
    if (entry.role === "user" || entry.role === "assistant")
      out.push({ role: entry.role, content: entry.content });
  }
  return out;
}

/**
 * The client's messages as sessiond would have stored them: a bare reset trigger or a `/queue` command
 * stores no message, so it and the answer right after it drop out; `/new text` stored `text`.
 */
function clientMessages(client: readonly ClientMessage[], resetTriggers: readonly string[]): ClientMessage[] {
  const out: ClientMessage[] = [];
  for (let i = 0; i < client.length; i++) {
    const message = client[i] as ClientMessage;
    if (message.role !== "user") {
      out.push(message);
      continue;
    }
    const trigger = parseResetTrigger(message.content, resetTriggers);
    const content = trigger ? trigger.rest : message.content;
    if (content === "" || parseQueueCommand(content)) {
      if (client[i + 1]?.role === "assistant") i++;
      continue;
    }
    out.push(content === message.content ? message : { role: "user", content });
  }
  return out;
}

/** Without user messages that got no answer (a failed or cancelled turn, a client's retry of it). */
function answered(messages: ClientMessage[]): ClientMessage[] {
  return messages.filter((m, i) => m.role !== "user" || messages[i + 1]?.role === "assistant");
}

/** Equal after line endings and outer whitespace, and after secret redaction (stored text is redacted). */
function sameMessage(stored: ClientMessage, client: ClientMessage): boolean {
  if (stored.role !== client.role) return false;
  const a = normalise(stored.content);
  const b = normalise(client.content);
  return a === b || normalise(redactSecrets(a)) === normalise(redactSecrets(b));
}

function normalise(text: string): string {
  return text.replace(/\r\n?/g, "\n").trim();
}

export interface ClientResetDeps {
  store: Store;
  resetTriggers: readonly string[];
  keepArchive: boolean;
}

/**
 * Before a client's input is stored: when its history does not continue the key's kept context, the
 * session starts a new generation (cause `client`), or is deleted when archives are not kept.
 */
export async function resetUnlessContinued(
  deps: ClientResetDeps,
  key: string,
  init: SessionInit,
  history: readonly ClientMessage[],
): Promise<{ cause: "client"; previousSessionId: string } | undefined> {
  const context = await deps.store.loadContext(key);
  if (!context || continuesStored(context.entries, history, deps.resetTriggers)) return undefined;
  if (deps.keepArchive) await deps.store.reset(key, "client", init);
  else await deps.store.delete(key);
  return { cause: "client", previousSessionId: context.session.id };
}
