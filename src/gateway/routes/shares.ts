import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { ShareLink } from "../../shares/share.js";
import { keyFromPath } from "../body.js";
import { HttpError } from "../errors.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import {
  createRoute,
  documentedRoutes,
  errorResponses,
  honoPath,
  jsonResponse,
  keyPathParams,
  z,
} from "./openapi-kit.js";

const PREFIX = "/api/sessions/";
const idPathParams = z.object({ id: z.string().openapi({ description: "The share link's id" }) });

/** The share-link routes as the document shows them (the public page is routes/share-page.ts). */
export const shareOperations = {
  create: createRoute({
    method: "post",
    path: "/api/sessions/{key}/share",
    summary: "Make a read-only link to the session as it is now (later messages are not shown)",
    request: { params: keyPathParams },
    responses: {
      201: jsonResponse("{id, url, key, sessionId, headSeq, title, createdAt}"),
      ...errorResponses,
    },
  }),
  list: createRoute({
    method: "get",
    path: "/api/sessions/{key}/shares",
    summary: "The key's share links, oldest first",
    request: { params: keyPathParams },
    responses: {
      200: jsonResponse("{shares: [{id, url, sessionId, headSeq, title, createdAt}]}"),
      ...errorResponses,
    },
  }),
  revoke: createRoute({
    method: "delete",
    path: "/api/shares/{id}",
    summary: "Revoke a share link on every gateway of the store at once",
    request: { params: idPathParams },
    responses: { 200: jsonResponse("{revoked: true}"), ...errorResponses },
  }),
  page: createRoute({
    method: "get",
    path: "/share/{id}",
    summary:
      "The shared conversation, read-only and without the token: an HTML page, or JSON when the id ends in .json " +
      "({title, sharedAt, messages: [{role, content, ts}], truncated}). A revoked or unknown id is 404",
    security: [],
    request: { params: idPathParams },
    responses: {
      200: { description: "text/html, or application/json for /share/{id}.json" },
      404: errorResponses[404],
      429: { description: "Too many share pages at once; Retry-After says when to try again" },
    },
  }),
};

/** Where the link opens: this gateway's own origin, as the request reached it. */
export function shareUrl(c: Context, id: string): string {
  return `${new URL(c.req.url).origin}/share/${id}`;
}

const withUrl = (c: Context, link: ShareLink) => ({ ...link, url: shareUrl(c, link.id) });

export function shareRoutes(deps: RouteDeps): OpenAPIHono<GatewayEnv> {
  const { engine } = deps;
  const app = documentedRoutes();

  app.post(honoPath(shareOperations.create), async (c) => {
    const link = await engine.shares.create(keyFromPath(c, PREFIX));
    return c.json(withUrl(c, link), 201);
  });

  app.get(honoPath(shareOperations.list), async (c) => {
    const links = await engine.shares.list(keyFromPath(c, PREFIX));
    return c.json({ shares: links.map((link) => withUrl(c, link)) });
  });

  app.delete(honoPath(shareOperations.revoke), async (c) => {
    if (!(await engine.shares.revoke(c.req.param("id") ?? ""))) {
      throw new HttpError(404, "NOT_FOUND", "no such share link");
    }
    return c.json({ revoked: true });
  });

  return app;
}
