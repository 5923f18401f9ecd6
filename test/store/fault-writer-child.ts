// The child side of childFaultyWriter (fault-writer.ts): opens the store of argv[2] and answers one JSON
// line per request read from stdin (append, close).
import { createInterface } from "node:readline";
import { openStore, type StoreConfig } from "../../src/store/open.js";
import { answerOf, faultInit } from "./fault-writer.js";

const store = await openStore(JSON.parse(process.argv[2] ?? "{}") as StoreConfig);
const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line) as { op: "append" | "close"; key: string; content: string };
  if (request.op === "close") {
    await store.close().catch(() => undefined);
    say({});
    break;
  }
  try {
    const { entries } = await store.append(
      request.key,
      [{ type: "message", role: "user", content: request.content }],
      { init: faultInit, durability: "strict" },
    );
    say({ id: entries[0]!.id });
  } catch (error) {
    say(answerOf(error));
  }
}
