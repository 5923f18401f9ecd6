import { SESSION_HEADER } from "../openai-request.js";
import { createRoute, errorResponses, jsonBody, jsonResponse, z } from "./openapi-kit.js";

/**
 * The OpenAI-compatible routes (routes/openai.ts) as the document shows them; `POST /v1/chat/completions`
 * checks its body with `completionBody`, then `parseChatCompletion` reads the conversation out of it.
 */
const message = z.looseObject(
  {
    role: z
      .unknown()
      .openapi({ type: "string", description: "user and assistant messages count; others are skipped" }),
    content: z
      .union([z.string(), z.array(z.unknown()), z.null()], {
        error: "message content must be a string or an array of parts",
      })
      .optional()
      .openapi({ description: "text, or parts whose type is text (the others are skipped)" }),
  },
  { error: "every message must be an object" },
);

export const completionBody = z.object({
  messages: z
    .array(message, { error: "messages must be a non-empty array" })
    .min(1, "messages must be a non-empty array")
    .openapi({
      description:
        "the last user message is the turn's input; the earlier ones decide whether the chat continues the stored session",
    }),
  user: z
    .string({ error: "user must be a string" })
    .nullish()
    .openapi({
      description: `names a session of its own under the client's address (${SESSION_HEADER} wins)`,
    }),
  model: z
    .string({ error: "model must be a string" })
    .nullish()
    .openapi({ description: "an agent (GET /v1/models); default the default agent" }),
  stream: z
    .boolean({ error: "stream must be true or false" })
    .nullish()
    .openapi({ description: "true: SSE chunks, then [DONE]" }),
  incognito: z.boolean({ error: "incognito must be true or false" }).nullish().openapi({
    description:
      "sessiond's own (extra_body): true keeps the session in the gateway's memory only, as /api/chat's incognito",
  }),
});

export const openAiOperations = {
  models: createRoute({
    method: "get",
    path: "/v1/models",
    summary: "Agents as OpenAI models",
    responses: { 200: jsonResponse("{object: list, data: [{id, object: model, created, owned_by}]}") },
  }),
  completions: createRoute({
    method: "post",
    path: "/v1/chat/completions",
    summary:
      "OpenAI-compatible chat; session openai-compat:<client IP>[:<user or X-Sessiond-Session>]; the last user message is the input, and earlier messages that do not continue the stored ones start a new generation (reset cause client)",
    request: {
      headers: z.object({
        [SESSION_HEADER]: z
          .string()
          .optional()
          .openapi({ description: "names the session under the client's address, as user does" }),
      }),
      body: jsonBody(completionBody),
    },
    responses: {
      200: jsonResponse("chat.completion, or with stream: true chat.completion.chunk SSE events"),
      ...errorResponses,
      429: jsonResponse("Too many turns queued on the session"),
    },
  }),
};
