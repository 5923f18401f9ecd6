import { isSessiondError, SessiondError } from "../model/errors.js";
import type { IdentityLinks } from "./types.js";
import { validateKey } from "./validate.js";

export interface KeyMerge {
  /** An existing key that the new links would stop using. */
  from: string;
  /** The key its messages would go to instead. */
  to: string;
}

function invalidLinks(message: string, field: string): never {
  throw new SessiondError("INVALID_ARGUMENT", message, { details: { field } });
}

/**
 * Lower-cased account → the key of the first account of its person, as written. Throws INVALID_ARGUMENT
 * for a malformed table or an account listed under two people (its key would depend on table order).
 */
export function compileIdentityLinks(links: IdentityLinks): ReadonlyMap<string, string> {
  if (typeof links !== "object" || links === null || Array.isArray(links)) {
    invalidLinks("identityLinks must be an object of person → accounts", "identityLinks");
  }
  const canonical = new Map<string, string>();
  const owner = new Map<string, string>();
  for (const [person, accounts] of Object.entries(links)) {
    const field = `identityLinks.${person}`;
    if (!Array.isArray(accounts as unknown)) invalidLinks(`${field} must be a list of accounts`, field);
    const first = accounts[0];
    for (const [index, account] of accounts.entries()) {
      const accountField = `${field}[${index}]`;
      try {
        validateKey(account);
      } catch (error) {
        if (!isSessiondError(error, "INVALID_KEY")) throw error;
        invalidLinks(`${accountField} is not a valid key: ${error.message}`, accountField);
      }
      const lower = account.toLowerCase();
      const previous = owner.get(lower);
      if (previous !== undefined && previous !== person) {
        invalidLinks(
          `${accountField} ${JSON.stringify(account)} is also listed under ${previous}`,
          accountField,
        );
      }
      owner.set(lower, person);
      canonical.set(lower, first as string);
    }
  }
  return canonical;
}

/** The key a direct chat's un-prefixed key maps to under the links (case-insensitive), else the key itself. */
export function linkedKey(baseKey: string, links: IdentityLinks): string {
  return compileIdentityLinks(links).get(baseKey.toLowerCase()) ?? baseKey;
}

function splitAgentPrefix(key: string, agents: readonly string[]): [prefix: string, rest: string] {
  if (agents.length > 1) {
    for (const agent of agents) {
      if (key.startsWith(`${agent}:`)) return [`${agent}:`, key.slice(agent.length + 1)];
    }
  }
  return ["", key];
}

/**
 * Which existing keys the change from `oldLinks` to `newLinks` would leave behind: a key that received
 * its own messages under the old links but whose messages would go to another key under the new ones.
 * Keys are read as routeEnvelope writes them in the default scope: an optional agent prefix (when
 * `agents` has more than one id), the linked part, an optional `:thread:<id>` suffix.
 */
export function identityLinkMerges(
  existingKeys: readonly string[],
  oldLinks: IdentityLinks,
  newLinks: IdentityLinks,
  agents: readonly string[] = [],
): KeyMerge[] {
  const before = compileIdentityLinks(oldLinks);
  const after = compileIdentityLinks(newLinks);
  const merges: KeyMerge[] = [];
  const seen = new Set<string>();
  for (const key of existingKeys) {
    if (seen.has(key)) continue;
    seen.add(key);
    const [prefix, rest] = splitAgentPrefix(key, agents);
    let base = rest;
    let suffix = "";
    const thread = rest.indexOf(":thread:");
    const restLower = rest.toLowerCase();
    if (!before.has(restLower) && !after.has(restLower) && thread > 0) {
      base = rest.slice(0, thread);
      suffix = rest.slice(thread);
    }
    const lower = base.toLowerCase();
    const oldTarget = before.get(lower) ?? base;
    const newTarget = after.get(lower) ?? base;
    if (oldTarget === base && newTarget !== base)
      merges.push({ from: key, to: `${prefix}${newTarget}${suffix}` });
  }
  return merges;
}
