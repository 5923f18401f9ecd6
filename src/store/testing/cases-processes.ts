import { describe, expect, it } from "vitest";
import type { Store } from "../store.js";
import { type Ack, retryBusy, startAppender } from "./children.js";
import { contentOf, type Harness, init, msg, type OpenedFactory } from "./fixtures.js";

const ROUNDS = 25;
const KEYS = 6;

/** Appends `rounds` rounds, each to every key at once; the acknowledged appends. */
async function appendRounds(store: Store, keys: string[], rounds: number, tag: string): Promise<Ack[]> {
  const acks: Ack[] = [];
  for (let round = 0; round < rounds; round++) {
    const results = await Promise.all(
      keys.map((key) => retryBusy(() => store.append(key, [msg(`${tag} ${round}`)], { init: init(tag) }))),
    );
    for (const [i, { entries }] of results.entries())
      acks.push({ key: keys[i]!, seq: entries[0]!.seq, id: entries[0]!.id });
  }
  return acks;
}

/** Checks every key of `acks` in `store`: gap-free, each ack at its seq, each content stored once. */
async function expectAllThere(store: Store, acks: Ack[], setup: Map<string, number>): Promise<void> {
  const byKey = new Map<string, Ack[]>();
  for (const a of acks) byKey.set(a.key, [...(byKey.get(a.key) ?? []), a]);
  for (const [key, keyAcks] of byKey) {
    const session = (await store.getSession(key))!;
    expect(session, key).toBeDefined();
    const entries = await store.readEntries(session.id);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    expect(session.entryCount).toBe(entries.length);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    expect(entries.length).toBe((setup.get(key) ?? 0) + keyAcks.length);
    const ids = new Map(entries.map((e) => [e.seq, e.id]));
    for (const ack of keyAcks) expect(ids.get(ack.seq), `${key} ${ack.seq}`).toBe(ack.id);
    const contents = entries.map(contentOf);
    expect(new Set(contents).size).toBe(contents.length);
  }
}

/** Two processes writing one store at once (for backends that allow it). */
export function processCases(t: Harness, factory: OpenedFactory): void {
  const { child, secondProcess } = factory;
  if (!child || !secondProcess) return;
  describe("a second process", () => {
    it(`appends while this one does: both processes' acknowledged appends are all there, gap-free (${secondProcess.sharedKeys ? "the same keys too" : "each its own keys"})`, async () => {
      const own = (tag: string) => Array.from({ length: KEYS }, (_, i) => `two:${tag}:${i}`);
      const shared = secondProcess.sharedKeys ? own("shared") : [];
      // Created first, so that neither process races to create them (a rule of its own).
      const setup = new Map<string, number>();
      for (const key of shared) {
        await t.store.append(key, [msg(`start ${key}`)], { init: init("setup") });
        setup.set(key, 1);
      }
      const other = startAppender(child(t.dir), [...own("child"), ...shared], ROUNDS, "child");
      await other.ready;
      other.go();
      const [mine, theirs] = await Promise.all([
        appendRounds(t.store, [...own("parent"), ...shared], ROUNDS, "parent"),
        other.done,
      ]);
      expect(theirs).toHaveLength(ROUNDS * (KEYS + shared.length));
      const acks = [...mine, ...theirs];
      if (secondProcess.sharedKeys) await expectAllThere(t.store, acks, setup);
      await t.store.close();
      t.store = await factory.open(t.dir);
      await expectAllThere(t.store, acks, setup);
      // Both processes' sessions take new appends.
      for (const key of [own("parent")[0]!, own("child")[0]!]) {
        const { session } = await t.store.append(key, [msg("after")]);
        expect(session.entryCount).toBe(ROUNDS + 1);
      }
    });
  });
}
