import { join } from "node:path";
import Database from "better-sqlite3";
import { openStore } from "../../src/store/open.js";
import { runStoreContract } from "./contract.js";

const path = (dir: string) => join(dir, "sessiond.db");

runStoreContract({
  name: "sqlite",
  persistent: true,
  open: (dir) => openStore({ backend: "sqlite", path: path(dir) }),
  crashConfig: (dir) => ({ backend: "sqlite", path: path(dir) }),
  verifyFiles: (dir) => {
    const db = new Database(path(dir));
    try {
      const result = db.pragma("integrity_check", { simple: true });
      if (result !== "ok") throw new Error(`integrity_check: ${String(result)}`);
    } finally {
      db.close();
    }
  },
});
