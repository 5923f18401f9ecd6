// Appends to keys that another process appends to as well, on one SQLite file: prints `ready` once open,
// waits for a line on stdin, then runs `rounds` rounds and prints `done <appends>`. Each round appends to
// every shared key at once (one batch of many: through the journal) and then to one key alone (a batch
// of one: straight into entries), so two such processes interleave both kinds of commit.
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const [path, tag, rounds, keys] = process.argv.slice(2);
const store = new SqliteStore({ path: path!, foldThreshold: 50, busyTimeoutMs: 30_000 });
const init = { agent: "main", channel: "cli", createdBy: tag! };
const shared = Array.from({ length: Number(keys) }, (_, i) => `shared:${i}`);
process.stdout.write("ready\n");
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
let appends = 0;
for (let r = 0; r < Number(rounds); r++) {
  await Promise.all(
    shared.map((key) =>
      store.append(
        key,
        [{ type: "message", role: "user", content: `${tag} ${r}`, idempotencyKey: `${tag}-${r}-${key}` }],
        { init },
      ),
    ),
  );
  await store.append(
    shared[r % shared.length]!,
    [{ type: "message", role: "user", content: `${tag} ${r} alone` }],
    { init },
  );
  appends += shared.length + 1;
}
await store.close();
process.stdout.write(`done ${appends}\n`);
