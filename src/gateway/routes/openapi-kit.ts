import { OpenAPIHono, z } from "@hono/zod-openapi";
import { intParamError } from "../body.js";
import { badRequest } from "../errors.js";
import type { GatewayEnv } from "../types.js";

export { createRoute, z } from "@hono/zod-openapi";
export { bodyOf, queryOf } from "./checked.js";

/**
 * A route module's app: its routes are declared with `createRoute` (the zod schemas their parameters are
 * checked with, and what `/api/openapi.json` shows), and a failed check is the gateway's usual 400
 * INVALID_ARGUMENT, thrown to its error handler like every other error.
 */
export function documentedRoutes(): OpenAPIHono<GatewayEnv> {
  return new OpenAPIHono<GatewayEnv>({
    defaultHook: (result) => {
      if (!result.success) throw badRequest(result.error.issues[0]?.message ?? "invalid request");
    },
  });
}

/** An optional integer query parameter from `min` to `max` (absent or empty: undefined). */
export function intQueryParam(name: string, min: number, max: number, description?: string) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === "") return undefined;
      const message = intParamError(name, value, min, max);
      if (message === undefined) return Number(value);
      ctx.addIssue({ code: "custom", message });
      return z.NEVER;
    })
    .openapi({ type: "integer", minimum: min, maximum: max, ...(description ? { description } : {}) });
}

/** An optional text query parameter. */
export function textQueryParam(description?: string) {
  return z
    .string()
    .optional()
    .openapi(description ? { description } : {});
}

/** `{key}`: read by `keyFromPath` from the raw URL (decoded exactly once), declared here for the document. */
export const keyPathParams = z.object({
  key: z.string().openapi({ description: "The session key, percent-encoded (it is decoded exactly once)" }),
});

export const namePathParams = z.object({ name: z.string() });

const errorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) }).openapi("Error");

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: errorSchema } },
});

export const errorResponses = {
  400: errorResponse("Bad input"),
  401: errorResponse("Missing or wrong token"),
  404: errorResponse("Unknown session or route"),
} as const;

/** A JSON answer; its shape is told in words (the handlers' types are the contract). */
export function jsonResponse(description: string) {
  return {
    description,
    content: { "application/json": { schema: z.any().openapi({ type: "object" }) } },
  };
}

/** A JSON request body, read by `readJsonObject` (size limit, INVALID_JSON) and checked with `bodyOf`. */
export function jsonBody(schema: z.ZodType) {
  return { required: true, content: { "application/json": { schema } } };
}

/**
 * Hono's path for a route read by its own handler (`{key}` → `:key`): a route with a JSON body is declared
 * with `createRoute` for the document but mounted without the library's body validator, whose parsing has
 * other limits and errors than `readJsonObject`; its handler checks the body with `bodyOf`.
 */
export function honoPath(route: { path: string }): string {
  return route.path.replaceAll(/\/{(.+?)}/g, "/:$1");
}

/** A required non-empty string field, with `requiredString`'s messages. */
export function requiredText(field: string) {
  return z
    .string({
      error: (issue) =>
        issue.input === undefined || issue.input === null
          ? `${field} is required`
          : `${field} must be a non-empty string`,
    })
    .min(1, `${field} must be a non-empty string`);
}

/** An optional non-empty string field (absent or null: undefined), with `optionalString`'s message. */
export function optionalText(field: string, description?: string) {
  return z
    .string({ error: `${field} must be a non-empty string` })
    .min(1, `${field} must be a non-empty string`)
    .nullish()
    .transform((value) => value ?? undefined)
    .openapi(description ? { description } : {});
}

/** A path parameter of a route mounted with `honoPath` (always there when the route matched). */
export function pathParam(c: { req: { param(name: string): string | undefined } }, name: string): string {
  return c.req.param(name) ?? "";
}
