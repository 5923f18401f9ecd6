import { describe, expect, it } from "vitest";
import type { ForeignChanges, KeyHead, StoreDriver } from "../../src/store/driver.js";
import { LogStore } from "../../src/store/log-store.js";
import { MemoryDriver } from "../../src/store/memory/memory-driver.js";

const init = { agent: "main", channel: "test", chatType: "direct", createdBy: "test" } as const;

/**
 * A driver another process also writes (as PostgreSQL is): the other writer's changes go straight into
 * the shared memory driver and are reported by `foreignChanges`; `loadKey` of `k` answers only when released.
 */
class SharedDriver {
  readonly backend = "shared";
  pending: ForeignChanges = { kind: "none" };
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  constructor(readonly shared: MemoryDriver) {}

  holdLoads(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  releaseLoads(): void {
    this.open?.();
    this.gate = undefined;
  }

  driver(): StoreDriver {
    const shared = this.shared;
    return new Proxy(shared, {
      get: (target, name, receiver) => {
        if (name === "backend") return this.backend;
        if (name === "foreignChanges")
          return () => {
            const changes = this.pending;
            this.pending = { kind: "none" };
            return changes;
          };
        if (name === "loadKey")
          return (key: string): KeyHead | Promise<KeyHead> => {
            const head = target.loadKey(key);
            const gate = key === "k" ? this.gate : undefined;
            return gate ? gate.then(() => head) : head;
          };
        const value = Reflect.get(target, name, receiver) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as unknown as StoreDriver;
  }
}

describe("a key's head read while another writer changed the key", () => {
  it("is not kept when the change was heard while the read was in flight", async () => {
    const memory = new MemoryDriver();
    const other = new LogStore(memory);
    await other.append("k", [{ type: "message", role: "user", content: "one" }], { init });

    const shared = new SharedDriver(memory);
    const store = new LogStore(shared.driver());
    shared.holdLoads();
    // This process starts reading the key: the load sees one entry, and answers later.
    const stale = store.getSession("k");
    await new Promise((resolve) => setImmediate(resolve));
    // Meanwhile the other process appends, and this one hears of it (a notification, another read).
    await other.append("k", [{ type: "message", role: "user", content: "two" }]);
    shared.pending = { kind: "keys", keys: ["k"] };
    await store.getSession("other-key");
    shared.releaseLoads();
    expect((await stale)?.entryCount).toBe(1);
    // The next read does not trust the head that load brought back.
    expect((await store.getSession("k"))?.entryCount).toBe(2);
    await store.close();
    await other.close();
  });
});
