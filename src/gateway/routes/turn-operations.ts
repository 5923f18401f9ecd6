import {
  createRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  optionalText,
  requiredText,
  textQueryParam,
  z,
} from "./openapi-kit.js";

/**
 * The routes that run a turn (routes/chat.ts) and the routes of a turn by id (routes/turns.ts), as the
 * OpenAPI document shows them. Their handlers check each body with these schemas, loaded on the first
 * turn (routes/schemas-on-demand.ts), so serving starts without zod.
 */
/** `incognito: true`: the session is kept in memory only (README "Incognito sessions"). */
const incognitoFlag = z
  .boolean({ error: "incognito must be true or false" })
  .nullish()
  .transform((value) => value ?? undefined)
  .openapi({
    description:
      "true: the session lives in the gateway's memory only (nothing on disk, no search or export, gone at restart); the key's first turn decides",
  });

export const chatBody = z.object({
  message: requiredText("message"),
  session_id: optionalText("session_id", "admin-session (the default) or admin-…"),
  sender: optionalText("sender", "who is talking (default admin): a listed admin gets the admin tools"),
  agent: optionalText("agent"),
  incognito: incognitoFlag,
});

export const webhookBody = z.object({
  peer: requiredText("peer"),
  message: requiredText("message"),
  channel: optionalText("channel", "default webhook"),
  subject_ref: optionalText("subject_ref", "the key becomes p2p:<peer>:<agent>:for:<subject_ref>"),
  agent: optionalText("agent"),
  message_id: optionalText("message_id", "the platform's id: a redelivery is not stored twice"),
  incognito: incognitoFlag,
});

export const appBody = z.object({
  message: requiredText("message"),
  agent: optionalText("agent"),
  incognito: incognitoFlag,
});

/** A chat webhook's payload is whatever the sender posts: the entity and text are read from known shapes. */
const hookPayload = z.record(z.string(), z.unknown()).openapi({
  description:
    "any JSON object; the entity from entity, object_attributes.iid, pull_request.number, merge_request.iid, issue.number, alert.id or fingerprint (else the time); the text from message (else the payload)",
});

const asyncQuery = z.object({
  async: textQueryParam("1 or true: answer 202 with the turn's id once its input is admitted"),
});

const turnResponses = {
  200: {
    description: "The turn's reply",
    content: {
      "application/json": { schema: z.any().openapi({ type: "object" }) },
      "text/event-stream": {
        schema: z
          .string()
          .openapi({ description: "with Accept: text/event-stream: delta events, then done or error" }),
      },
    },
  },
  202: jsonResponse(
    "With Prefer: respond-async or ?async=1: {id, key, session_id, state: queued} once the input is admitted (Location: /api/turns/{id})",
  ),
  ...errorResponses,
  429: jsonResponse("Too many turns queued on the session (SESSION_BUSY, QUEUE_DROPPED)"),
} as const;

const userParams = z.object({ user: z.string().openapi({ description: "percent-encoded, decoded once" }) });
const turnIdParams = z.object({ id: z.string() });
export const turnOperations = {
  chat: createRoute({
    method: "post",
    path: "/api/chat",
    summary: "Web chat turn",
    request: { query: asyncQuery, body: jsonBody(chatBody) },
    responses: turnResponses,
  }),
  webhook: createRoute({
    method: "post",
    path: "/api/webhook",
    summary: "Webhook turn",
    request: { query: asyncQuery, body: jsonBody(webhookBody) },
    responses: turnResponses,
  }),
  app: createRoute({
    method: "post",
    path: "/api/app/{user}",
    summary: "App API turn",
    request: { params: userParams, query: asyncQuery, body: jsonBody(appBody) },
    responses: turnResponses,
  }),
  appSession: createRoute({
    method: "post",
    path: "/api/app/{user}/{session}",
    summary: "App API turn on a named session",
    request: {
      params: userParams.extend({ session: z.string() }),
      query: asyncQuery,
      body: jsonBody(appBody),
    },
    responses: turnResponses,
  }),
  hook: createRoute({
    method: "post",
    path: "/api/hooks/{agent}/{type}",
    summary: "Chat webhook about an entity (taken from the payload)",
    request: {
      params: z.object({ agent: z.string(), type: z.string() }),
      query: asyncQuery,
      body: jsonBody(hookPayload),
    },
    responses: turnResponses,
  }),
  status: createRoute({
    method: "get",
    path: "/api/turns/{id}",
    summary: "A turn's state (queued, running, done, failed, interrupted, cancelled) and reply",
    request: { params: turnIdParams },
    responses: {
      200: jsonResponse(
        "{id, key, state, admittedAt, startedAt?, finishedAt?, reply?, replyId?, notice?, error?}",
      ),
      ...errorResponses,
      410: jsonResponse("The finished turn's result was evicted (turns.results_max_bytes)"),
    },
  }),
  cancel: createRoute({
    method: "delete",
    path: "/api/turns/{id}",
    summary: "Cancel a queued input before it runs",
    request: { params: turnIdParams },
    responses: { 200: jsonResponse("{id, cancelled}"), ...errorResponses },
  }),
  abort: createRoute({
    method: "post",
    path: "/api/turns/{id}/abort",
    summary: "Stop a turn: cancel it while queued, abort it while running (its partial reply kept)",
    request: { params: turnIdParams },
    responses: { 200: jsonResponse("{id, cancelled} or {id, aborted}"), ...errorResponses },
  }),
};
