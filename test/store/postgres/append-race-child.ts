// Appends to keys other processes append to as well, on one PostgreSQL database: prints `ready` once open,
// waits for a line on stdin, then runs `rounds` rounds, each appending to every shared key at once, and
// prints `done <stored> <busy>`: the appends stored, and those refused with STORE_BUSY (any other error
// fails the process).
import { isSessiondError } from "../../../src/model/errors.js";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";

const [url, tag, rounds, keys] = process.argv.slice(2);
const store = await PostgresStore.open({ url: url! });
const init = { agent: "main", channel: "cli", createdBy: tag! };
const shared = Array.from({ length: Number(keys) }, (_, i) => `shared:${i}`);
process.stdout.write("ready\n");
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
let stored = 0;
let busy = 0;
for (let r = 0; r < Number(rounds); r++) {
  await Promise.all(
    shared.map(async (key) => {
      try {
        await store.append(key, [{ type: "message", role: "user", content: `${tag} ${r}` }], { init });
        stored++;
      } catch (error) {
        if (!isSessiondError(error, "STORE_BUSY")) throw error;
        busy++;
      }
    }),
  );
}
await store.close();
process.stdout.write(`done ${stored} ${busy}\n`);
