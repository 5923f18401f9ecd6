import { RecentMap } from "../recent-map.js";
import type { Statements } from "../sql/sqlite-statements.js";
import { SQL } from "./sqlite-sql.js";

/** Session ids to their rowids (`sid`) on one connection: the recent ones kept, the rest looked up. */
export class SidCache {
  private readonly sids = new RecentMap<string, number>(20_000);

  constructor(private readonly sql: Statements) {}

  get(id: string): number | undefined {
    const cached = this.sids.get(id);
    if (cached !== undefined) return cached;
    const sid = this.sql.get(SQL.sidOf).pluck().get(id) as number | undefined;
    if (sid !== undefined) this.sids.set(id, sid);
    return sid;
  }

  set(id: string, sid: number): void {
    this.sids.set(id, sid);
  }

  delete(id: string): void {
    this.sids.delete(id);
  }

  clear(): void {
    this.sids.clear();
  }
}
