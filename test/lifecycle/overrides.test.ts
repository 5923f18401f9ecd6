import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_COMPACTION, resolveCompactionPolicy } from "../../src/compaction/policy.js";
import {
  checkOverrideValue,
  compactionOverrides,
  type InheritedLayers,
  OVERRIDE_NAMES,
  type OverrideLayers,
  parseAssignment,
  planOverrideChange,
  resolveSetting,
  resolveSettings,
} from "../../src/lifecycle/overrides.js";
import { isSessiondError, type SessiondError } from "../../src/model/errors.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { openStore } from "../../src/store/open.js";
import type { Store } from "../../src/store/store.js";

function error(fn: () => unknown): SessiondError {
  try {
    fn();
  } catch (e) {
    if (isSessiondError(e)) return e;
    throw e;
  }
  throw new Error("expected a SessiondError");
}

describe("parseAssignment", () => {
  it.each([
    ["model=gpt-4o", "model", "gpt-4o"],
    ["provider= anthropic ", "provider", "anthropic"],
    ["model=org/model=v2", "model", "org/model=v2"],
    ["compaction.enabled=false", "compaction.enabled", false],
    ["compaction.enabled=YES", "compaction.enabled", true],
    ["compaction.max_messages=80", "compaction.max_messages", 80],
    ["compaction.keep_recent=1", "compaction.keep_recent", 1],
    ["compaction.max_tokens=1e5", "compaction.max_tokens", 100_000],
    ["compaction.window_fraction=0.5", "compaction.window_fraction", 0.5],
    ["compaction.window_fraction=1", "compaction.window_fraction", 1],
    ["compaction.summary_max_chars=4000", "compaction.summary_max_chars", 4000],
    ["reset.mode=Daily", "reset.mode", "daily"],
    ["reset.at_hour=0", "reset.at_hour", 0],
    ["reset.at_hour=23", "reset.at_hour", 23],
    ["reset.idle_minutes=90", "reset.idle_minutes", 90],
    ["reset.timezone=europe/paris", "reset.timezone", "Europe/Paris"],
    ["reset.timezone=UTC", "reset.timezone", "UTC"],
  ])("%s", (text, name, value) => {
    expect(parseAssignment(text)).toEqual({ name, value });
  });

  it("refuses an unknown name and lists the known ones", () => {
    const e = error(() => parseAssignment("temperature=0.2"));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toContain('"temperature"');
    for (const name of OVERRIDE_NAMES) expect(e.message).toContain(name);
  });

  it.each([
    "compaction.max_messages=0",
    "compaction.max_messages=-3",
    "compaction.max_messages=2.5",
    "compaction.max_messages=fifty",
    "compaction.max_messages=0x10",
    "compaction.max_tokens=Infinity",
    "compaction.window_fraction=0",
    "compaction.window_fraction=1.01",
    "compaction.enabled=maybe",
    "compaction.enabled=1",
    "reset.mode=weekly",
    "reset.at_hour=24",
    "reset.at_hour=7.5",
    "reset.idle_minutes=0",
    "reset.timezone=Mars/Olympus_Mons",
  ])("refuses the bad value %s with what it must be", (text) => {
    const e = error(() => parseAssignment(text));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toMatch(/ must be /);
  });

  it("refuses text without '=' and an empty value (pointing at unset)", () => {
    expect(error(() => parseAssignment("model")).message).toMatch(/name=value/);
    const empty = error(() => parseAssignment("model=  "));
    expect(empty.code).toBe("INVALID_ARGUMENT");
    expect(empty.message).toMatch(/unset/);
  });

  it("checks typed values strictly: no text for numbers", () => {
    expect(checkOverrideValue("compaction.max_messages", 60)).toBe(60);
    expect(error(() => checkOverrideValue("compaction.max_messages", "60")).code).toBe("INVALID_ARGUMENT");
    expect(error(() => checkOverrideValue("model", 4)).code).toBe("INVALID_ARGUMENT");
    expect(error(() => checkOverrideValue("model", "bad\nname")).code).toBe("INVALID_ARGUMENT");
  });
});

describe("resolveSetting: session (the user's override) > agent > per-sender > default", () => {
  const values = { session: "s-model", agent: "a-model", sender: "p-model", defaults: "d-model" } as const;
  const layerNames = ["session", "agent", "sender"] as const;
  const combos = Array.from({ length: 8 }, (_, mask) => layerNames.filter((_, i) => mask & (1 << i)));

  it.each(combos.map((present) => [present.join("+") || "(default only)", present] as const))(
    "%s",
    (_label, present) => {
      const layers: OverrideLayers = { defaults: { model: values.defaults } };
      for (const layer of present) layers[layer] = { model: values[layer] };
      const winner = layerNames.find((l) => present.includes(l));
      expect(resolveSetting("model", layers)).toEqual(
        winner === undefined
          ? { value: "d-model", source: "default" }
          : { value: values[winner], source: winner },
      );
    },
  );

  it("a layer that sets other names only does not hide the next one", () => {
    const layers = {
      session: { provider: "x" },
      agent: {},
      sender: { model: "p" },
      defaults: { model: "d" },
    };
    expect(resolveSetting("model", layers)).toEqual({ value: "p", source: "sender" });
  });

  it("is undefined when no layer sets it", () => {
    expect(resolveSetting("reset.timezone", { defaults: {} })).toEqual({
      value: undefined,
      source: "default",
    });
  });

  it("refuses an invalid stored value and names its layer", () => {
    const e = error(() =>
      resolveSetting("compaction.max_messages", {
        session: { "compaction.max_messages": "lots" },
        defaults: {},
      }),
    );
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toMatch(/^session setting compaction\.max_messages .* unset it/);
  });

  it("resolves every known name at once", () => {
    const all = resolveSettings({
      session: { "reset.mode": "idle" },
      defaults: { ...compactionOverrides(DEFAULT_COMPACTION), model: "d" },
    });
    expect(Object.keys(all).sort()).toEqual([...OVERRIDE_NAMES].sort());
    expect(all["reset.mode"]).toEqual({ value: "idle", source: "session" });
    expect(all["compaction.max_messages"]).toEqual({ value: 50, source: "default" });
    expect(all.provider).toEqual({ value: undefined, source: "default" });
  });

  it("compaction overrides use the names resolveCompactionPolicy reads", () => {
    const overrides = compactionOverrides({ ...DEFAULT_COMPACTION, maxMessages: 77, keepRecent: 7 });
    const policy = resolveCompactionPolicy(DEFAULT_COMPACTION, undefined, overrides);
    expect(policy.maxMessages).toBe(77);
    expect(policy.keepRecent).toBe(7);
  });
});

describe("planOverrideChange", () => {
  const inherited: InheritedLayers = {
    agent: { model: "agent-model" },
    sender: { model: "sender-model", provider: "sender-provider" },
    defaults: { model: "default-model", provider: "default-provider", "compaction.max_messages": 50 },
  };
  const none = { overrides: {} };

  it("stores a value that differs from what the session inherits", () => {
    expect(planOverrideChange(none, "model", "gpt-4o", inherited)).toEqual({
      patch: { overrides: { model: "gpt-4o" } },
      effect: "set",
      effective: { value: "gpt-4o", source: "session" },
    });
  });

  it("setting the inherited value removes the override: agent beats sender and default", () => {
    const plan = planOverrideChange({ overrides: { model: "gpt-4o" } }, "model", "agent-model", inherited);
    expect(plan).toEqual({
      patch: { overrides: { model: null } },
      effect: "removed",
      effective: { value: "agent-model", source: "agent" },
    });
    // The sender's or default's value is not what the session inherits here: it is stored.
    expect(planOverrideChange(none, "model", "default-model", inherited).effect).toBe("set");
  });

  it("removes when equal to the per-sender value without an agent value, or the default without both", () => {
    expect(planOverrideChange(none, "provider", "sender-provider", inherited)).toMatchObject({
      patch: { overrides: { provider: null } },
      effect: "unchanged",
      effective: { value: "sender-provider", source: "sender" },
    });
    expect(
      planOverrideChange(
        { overrides: { "compaction.max_messages": 80 } },
        "compaction.max_messages",
        50,
        inherited,
      ),
    ).toMatchObject({ patch: { overrides: { "compaction.max_messages": null } }, effect: "removed" });
  });

  it("compares canonical values: a differently spelt time zone equal to the default is removed", () => {
    const layers = { defaults: { "reset.timezone": "Europe/Paris" } };
    const plan = planOverrideChange(
      { overrides: { "reset.timezone": "UTC" } },
      "reset.timezone",
      "europe/paris",
      layers,
    );
    expect(plan.patch).toEqual({ overrides: { "reset.timezone": null } });
  });

  it("unset removes the override and reports what the session falls back to", () => {
    expect(planOverrideChange({ overrides: { model: "x" } }, "model", null, inherited)).toEqual({
      patch: { overrides: { model: null } },
      effect: "removed",
      effective: { value: "agent-model", source: "agent" },
    });
    expect(planOverrideChange(none, "model", null, inherited).effect).toBe("unchanged");
  });

  it("reports a set to the value already stored as unchanged", () => {
    expect(planOverrideChange({ overrides: { model: "x" } }, "model", "x", inherited).effect).toBe(
      "unchanged",
    );
  });

  it("refuses unknown names and bad values", () => {
    expect(error(() => planOverrideChange(none, "temperature", 1, inherited)).code).toBe("INVALID_ARGUMENT");
    expect(error(() => planOverrideChange(none, "compaction.max_messages", 0, inherited)).code).toBe(
      "INVALID_ARGUMENT",
    );
  });
});

for (const backend of ["memory", "sqlite"] as const) {
  describe(`overrides stored with the session (${backend})`, () => {
    let dir: string;
    let store: Store;

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), "sessiond-overrides-"));
      store =
        backend === "memory"
          ? new MemoryStore()
          : await openStore({ backend: "sqlite", path: join(dir, "sessiond.db") });
      await store.append("telegram:1", [{ type: "message", role: "user", content: "hi" }], {
        init: {
          agent: "main",
          channel: "telegram",
          createdBy: "1",
        },
      });
    });

    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("set, set to the inherited value, unset", async () => {
      const inherited: InheritedLayers = { agent: { model: "agent-model" }, defaults: { model: "d" } };
      const apply = async (value: string | null) => {
        const session = (await store.getSession("telegram:1"))!;
        const name = "model";
        const plan = planOverrideChange(session, name, value, inherited);
        const updated = await store.updateSession("telegram:1", plan.patch);
        return resolveSetting(name, { ...inherited, session: updated.overrides });
      };
      expect(await apply("gpt-4o")).toEqual({ value: "gpt-4o", source: "session" });
      expect((await store.getSession("telegram:1"))?.overrides).toEqual({ model: "gpt-4o" });
      expect(await apply("agent-model")).toEqual({ value: "agent-model", source: "agent" });
      expect((await store.getSession("telegram:1"))?.overrides).toEqual({});
      await apply("gpt-4o");
      expect(await apply(null)).toEqual({ value: "agent-model", source: "agent" });
      expect((await store.getSession("telegram:1"))?.overrides).toEqual({});
    });
  });
}
