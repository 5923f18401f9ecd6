import { SessiondError } from "../model/errors.js";
import type { SearchQuery, SearchResult } from "./query.js";

/** A store that searches what was said in its sessions (SQLite, memory). */
export interface SearchableStore {
  search(query: SearchQuery): Promise<SearchResult>;
}

export function isSearchable(store: object): store is SearchableStore {
  return typeof (store as Partial<SearchableStore>).search === "function";
}

/** Searches `store`, or fails with `SEARCH_UNAVAILABLE` when its backend has no search index. */
export function searchStore(store: { backend: string }, query: SearchQuery): Promise<SearchResult> {
  if (!isSearchable(store))
    return Promise.reject(
      new SessiondError("SEARCH_UNAVAILABLE", `the ${store.backend} store has no search index`),
    );
  return store.search(query);
}
