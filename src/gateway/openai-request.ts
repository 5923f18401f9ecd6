import { requireKeyPart } from "../keys/validate.js";
import type { ClientMessage } from "../model/envelope.js";
import { badRequest } from "./errors.js";

/** The header that names a client's session under its address, as the request's `user` field does. */
export const SESSION_HEADER = "x-sessiond-session";

/** What sessiond reads of a `POST /v1/chat/completions` body. */
export interface ChatCompletionRequest {
  model: unknown;
  stream: boolean;
  /** The last user message's text: the turn's input. */
  text: string;
  /** The user and assistant messages before it: the client's copy of the conversation. */
  history: ClientMessage[];
  /** The client's name for its session (`X-Sessiond-Session`, else `user`), checked as a key part. */
  session?: string;
}

/** Parses the body (and the session header); 400 for anything it cannot use. */
export function parseChatCompletion(
  body: Record<string, unknown>,
  sessionHeader: string | undefined,
): ChatCompletionRequest {
  const { messages } = body;
  if (!Array.isArray(messages) || messages.length === 0)
    throw badRequest("messages must be a non-empty array");
  const parsed = messages.map(messageOf);
  const last = parsed.findLastIndex((m) => m.role === "user");
  if (last === -1) throw badRequest("messages has no user message");
  const text = (parsed[last] as ClientMessage).content;
  if (text === "") throw badRequest("the last user message is empty");
  const history = parsed
    .slice(0, last)
    .filter((m): m is ClientMessage => m.role === "user" || m.role === "assistant");
  const session = sessionOf(body.user, sessionHeader);
  return { model: body.model, stream: body.stream === true, text, history, ...(session ? { session } : {}) };
}

function sessionOf(user: unknown, header: string | undefined): string | undefined {
  if (header !== undefined) return requireKeyPart(header, "the X-Sessiond-Session header");
  if (user === undefined || user === null) return undefined;
  if (typeof user !== "string") throw badRequest("user must be a string");
  return requireKeyPart(user, "user");
}

function messageOf(m: unknown): { role: unknown; content: string } {
  if (typeof m !== "object" || m === null) throw badRequest("every message must be an object");
  const { role, content } = m as { role?: unknown; content?: unknown };
  return { role, content: contentText(content) };
}

/** A message's text: a string, or its text parts joined; none (an assistant's tool calls) is "". */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (content === undefined || content === null) return "";
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) => {
        const p = part as { type?: unknown; text?: unknown };
        return p && p.type === "text" && typeof p.text === "string" ? p.text : "";
      })
      .join("");
  }
  throw badRequest("message content must be a string or an array of parts");
}
