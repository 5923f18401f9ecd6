// Opens a JSONL directory another store has open, appends one user message to an existing key, closes.
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";

const [dir, key, text] = process.argv.slice(2);
const store = new JsonlStore({ path: dir!, onProblem: () => undefined });
await store.append(key!, [{ type: "message", role: "user", content: text! }]);
await store.close();
process.stdout.write("done\n");
