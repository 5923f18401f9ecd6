import { SessiondError } from "../model/errors.js";
import { capabilitiesOf } from "../store/store.js";
import type { SearchOptions } from "./budget.js";
import { type ForkLookup, withForks } from "./fork-hits.js";
import type { SearchQuery, SearchResult } from "./query.js";

/** A store that searches what was said in its sessions (SQLite, memory). */
export interface SearchableStore {
  /** Within the search's time budget (`options`, else SEARCH_BUDGET_MS): `complete: false` past it. */
  search(query: SearchQuery, options?: SearchOptions): Promise<SearchResult>;
}

/** Whether the store declares search (`capabilities.search`). */
export function isSearchable(store: object): store is SearchableStore {
  return capabilitiesOf(store).search === true;
}

/**
 * Searches `store`, or fails with `SEARCH_UNAVAILABLE` when its backend has no search index. Each hit names
 * the forks that inherit it (fork-hits.ts).
 */
export async function searchStore(
  store: { backend: string } & ForkLookup,
  query: SearchQuery,
): Promise<SearchResult> {
  if (!isSearchable(store))
    throw new SessiondError("SEARCH_UNAVAILABLE", `the ${store.backend} store has no search index`);
  return withForks(store, await store.search(query));
}
