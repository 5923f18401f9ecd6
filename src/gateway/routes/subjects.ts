import type { OpenAPIHono } from "@hono/zod-openapi";
import { keyFromPath } from "../body.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import { createRoute, documentedRoutes, errorResponses, honoPath, jsonResponse, z } from "./openapi-kit.js";

const idPathParams = z.object({
  id: z.string().openapi({
    description:
      "A person of session.identity_links or one of their accounts (e.g. telegram:42); an account no link names is erased alone",
  }),
});

/** Erasure by subject (src/lifecycle/subject-erasure.ts, docs/erasure.md). */
export const subjectOperations = {
  forget: createRoute({
    method: "delete",
    path: "/api/subjects/{id}",
    summary:
      "Erase everything of one person across identity links (sessions of every generation, archives, forks, their " +
      "messages in group sessions, runtime " +
      "sessions, share links, inbox rows, search rows) and rewrite the store's files without it; answers the receipt",
    request: { params: idPathParams },
    responses: {
      200: jsonResponse(
        "{subject, accounts, keys: [{key, sessions, entries}], sessions, entries, " +
          "groups: {sessions, messages, summaries, titles}, inboxRows, searchTerms, " +
          "runtimeAndShareKeys, scrub, erasedAt, tombstone: {file, messages}, notErased: [what it does not reach]}",
      ),
      ...errorResponses,
    },
  }),
};

export function subjectRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const { engine } = deps;
  const app = documentedRoutes();
  app.delete(honoPath(subjectOperations.forget), async (c) => {
    return c.json(await engine.forget({ subject: keyFromPath(c, "/api/subjects/") }));
  });
  return app;
}
