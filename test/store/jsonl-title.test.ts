import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import { isSessiondError } from "../../src/model/errors.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { findLatestConversation, loadContext } from "../support/crabtalk-loader.js";
import { FaultFs } from "./fault-fs.js";

// tmpfs where there is one: the fault layer decides what survives, so the disk's speed only slows the loop.
const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(base, "sessiond-jsonl-title-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const KEY = "crab:tg:7";
const init = { agent: "crab", channel: "crabtalk", createdBy: "tg:7" };
const exchange: EntryInput[] = [
  { type: "message", role: "user", content: "plan a trip to Lisbon" },
  { type: "message", role: "assistant", content: "Sure: when?" },
];
const title: EntryInput = { type: "title", title: "Lisbon trip" };
const sessionFiles = (dir: string) => readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
const lines = (path: string) => readFileSync(path, "utf8").trimEnd().split("\n");

describe("the JSONL store writes the title on CrabTalk's metadata line", () => {
  it("rewrites line 1 with the title and renames the file as CrabTalk's set_title does", async () => {
    const dir = freshDir();
    let store = new JsonlStore({ path: dir });
    const { session } = await store.append(KEY, exchange, { init });
    await store.flush();
    const before = lines(join(dir, "crab_tg-7_1.jsonl"));
    await store.append(KEY, [title]);
    expect(sessionFiles(dir)).toEqual(["crab_tg-7_1_lisbon-trip.jsonl"]);
    expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    const after = lines(join(dir, "crab_tg-7_1_lisbon-trip.jsonl"));
    expect(JSON.parse(after[0]!)).toEqual({ ...JSON.parse(before[0]!), title: "Lisbon trip" });
    expect(after.slice(1, before.length)).toEqual(before.slice(1));
    // The file stays the session's: later appends go to it, and CrabTalk finds it with its title.
    await store.append(KEY, [{ type: "message", role: "user", content: "in May" }]);
    await store.close();
    const crab = loadContext(findLatestConversation(dir, "crab", "tg:7")!);
    expect(crab.meta.title).toBe("Lisbon trip");
    expect(crab.messages.map((m) => m.content)).toEqual(["plan a trip to Lisbon", "Sure: when?", "in May"]);
    store = new JsonlStore({ path: dir });
    expect(await store.getSession(KEY)).toMatchObject({
      id: session.id,
      title: "Lisbon trip",
      entryCount: 4,
    });
    await store.close();
  });

  it("a power cut at every step of the rewrite leaves one file, old or new, and the next open finishes it", async () => {
    // A dry run counts the mutating calls the title's append makes.
    const dry = new FaultFs(freshDir());
    const dryStore = new JsonlStore({ path: dirs.at(-1)!, fs: dry.fs });
    await dryStore.append(KEY, exchange, { init });
    const from = dry.mutations;
    await dryStore.append(KEY, [title]);
    const to = dry.mutations;
    await dryStore.close();
    expect(to - from).toBeGreaterThan(0);
    for (let cutAt = from + 1; cutAt <= to + 1; cutAt++) {
      const dir = freshDir();
      const fault = new FaultFs(dir);
      const store = new JsonlStore({ path: dir, fs: fault.fs, onProblem: () => undefined });
      const { session } = await store.append(KEY, exchange, { init });
      fault.faults = { cutAt: fault.mutations + (cutAt - from) };
      const titled = await store.append(KEY, [title]).then(
        () => true,
        (error: unknown) => {
          if (!isSessiondError(error)) throw error;
          return false;
        },
      );
      await store.close().catch(() => undefined);
      fault.cutPower();

      const where = `power cut at call ${cutAt - from} of the title's append`;
      expect(sessionFiles(dir), where).toHaveLength(1);
      const reopened = new JsonlStore({ path: dir, onProblem: () => undefined });
      const current = (await reopened.getSession(KEY))!;
      expect(current.id, where).toBe(session.id);
      const messages = (await reopened.readEntries(session.id)).filter((e) => e.type === "message");
      expect(
        messages.map((e) => e.type === "message" && e.content),
        where,
      ).toEqual(exchange.map((e) => e.type === "message" && e.content));
      if (titled) expect(current.title, where).toBe("Lisbon trip");
      await reopened.close();
      // One file, its name and line 1 as CrabTalk reads them: titled everywhere, or nowhere.
      const files = sessionFiles(dir);
      expect(files, where).toHaveLength(1);
      expect(
        readdirSync(dir).filter((n) => n.endsWith(".tmp")),
        where,
      ).toEqual([]);
      const meta = JSON.parse(lines(join(dir, files[0]!))[0]!);
      expect([files[0], meta.title], where).toEqual(
        current.title === "" ? ["crab_tg-7_1.jsonl", ""] : ["crab_tg-7_1_lisbon-trip.jsonl", "Lisbon trip"],
      );
    }
  }, 300_000);
});
