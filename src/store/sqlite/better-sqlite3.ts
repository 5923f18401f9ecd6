import type Database from "better-sqlite3";
import { lazyModule } from "../../model/load-sync.js";

/**
 * better-sqlite3's `Database`, loaded when the first database opens: a native addon of about a dozen files
 * and a 2 MB library that `import "sessiond"` and `sessiond route` never need.
 */
export const sqliteDatabase: () => typeof Database = lazyModule<typeof Database>("better-sqlite3");
