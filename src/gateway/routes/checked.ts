import type { output, ZodType } from "zod";
import { badRequest } from "../errors.js";

/*
 * A request checked with the schema its route declares, the first problem a 400 INVALID_ARGUMENT. Type-only
 * zod here: the routes mounted at start-up import these, and the schemas themselves load on first use.
 */

/** `body` checked with the schema its route declares. */
export function bodyOf<T extends ZodType>(schema: T, body: Record<string, unknown>): output<T> {
  return checked(schema, body, "invalid request body");
}

/** A route's query parameters checked with the schema it declares, as `bodyOf` checks a body. */
export function queryOf<T extends ZodType>(schema: T, query: Record<string, string>): output<T> {
  return checked(schema, query, "invalid query");
}

function checked<T extends ZodType>(schema: T, value: unknown, fallback: string): output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(result.error.issues[0]?.message ?? fallback);
  return result.data;
}
