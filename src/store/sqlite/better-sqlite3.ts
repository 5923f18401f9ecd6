import type Database from "better-sqlite3";
import { SessiondError } from "../../model/errors.js";
import { lazyModule } from "../../model/load-sync.js";
import { nodeTooOld } from "../../model/node-version.js";

const load = lazyModule<typeof Database>("better-sqlite3");

/**
 * better-sqlite3's `Database`, loaded when the first database opens: a native addon of about a dozen files
 * and a 2 MB library that `import "sessiond"` and `sessiond route` never need. On a Node line it does not
 * support it would crash the process at its first statement: refused here with one line instead.
 */
export function sqliteDatabase(): typeof Database {
  const tooOld = nodeTooOld(process.versions.node, process.execPath);
  if (tooOld) throw new SessiondError("STORE_UNAVAILABLE", tooOld);
  return load();
}
