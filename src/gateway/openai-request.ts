import { requireKeyPart } from "../keys/validate.js";
import type { ClientMessage } from "../model/envelope.js";
import { badRequest } from "./errors.js";

/** The header that names a client's session under its address, as the request's `user` field does. */
export const SESSION_HEADER = "x-sessiond-session";

/** A `POST /v1/chat/completions` body as its schema (routes/openai-operations.ts) let it through. */
export interface ChatCompletionBody {
  messages: ReadonlyArray<{ role?: unknown; content?: string | readonly unknown[] | null }>;
  user?: string | null;
  model?: string | null;
  stream?: boolean | null;
  incognito?: boolean | null;
}

/** What sessiond reads of a `POST /v1/chat/completions` body. */
export interface ChatCompletionRequest {
  model: string | undefined;
  stream: boolean;
  /** The last user message's text: the turn's input. */
  text: string;
  /** The user and assistant messages before it: the client's copy of the conversation. */
  history: ClientMessage[];
  /** The client's name for its session (`X-Sessiond-Session`, else `user`), checked as a key part. */
  session?: string;
  /** Keep the session in memory only (sessiond's own field, sent as the SDKs' `extra_body`). */
  incognito: boolean;
}

/** The conversation out of a checked body (and the session header); 400 for what the schema cannot tell. */
export function parseChatCompletion(
  body: ChatCompletionBody,
  sessionHeader: string | undefined,
): ChatCompletionRequest {
  const parsed = body.messages.map((m) => ({ role: m.role, content: contentText(m.content) }));
  const last = parsed.findLastIndex((m) => m.role === "user");
  if (last === -1) throw badRequest("messages has no user message");
  const text = (parsed[last] as ClientMessage).content;
  if (text === "") throw badRequest("the last user message is empty");
  const history = parsed
    .slice(0, last)
    .filter((m): m is ClientMessage => m.role === "user" || m.role === "assistant");
  const session = sessionOf(body.user, sessionHeader);
  return {
    model: body.model ?? undefined,
    stream: body.stream === true,
    incognito: body.incognito === true,
    text,
    history,
    ...(session ? { session } : {}),
  };
}

function sessionOf(user: string | null | undefined, header: string | undefined): string | undefined {
  if (header !== undefined) return requireKeyPart(header, "the X-Sessiond-Session header");
  if (user === undefined || user === null) return undefined;
  return requireKeyPart(user, "user");
}

/** A message's text: a string, or its text parts joined; none (an assistant's tool calls) is "". */
function contentText(content: string | readonly unknown[] | null | undefined): string {
  if (typeof content === "string") return content;
  if (content === undefined || content === null) return "";
  return content
    .map((part: unknown) => {
      const p = part as { type?: unknown; text?: unknown } | null;
      return p && p.type === "text" && typeof p.text === "string" ? p.text : "";
    })
    .join("");
}
