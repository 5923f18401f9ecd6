import { describe, expect, it } from "vitest";
import { collectInjected, type InjectedContext, type InjectionHook } from "../../src/context/index.js";
import type { Session } from "../../src/model/session.js";

const session: Session = {
  id: "01J0000000000000000000000",
  key: "agent:main:main",
  agent: "main",
  channel: "cli",
  createdBy: "tester",
  generation: 1,
  state: "active",
  title: "",
  createdAt: 0,
  lastActivityAt: 0,
  entryCount: 0,
  messageCount: 0,
  approxTokens: 0,
  contextFromSeq: 1,
  overrides: {},
};

const ctx = (signal = new AbortController().signal) => ({ key: session.key, agent: "main", session, signal });

describe("collectInjected", () => {
  it("runs the hooks concurrently and returns their context in hook order", async () => {
    const started: string[] = [];
    let open = (): void => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const slow: InjectionHook = async () => {
      started.push("slow");
      await gate;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return [{ kind: "memory", content: "likes tea" }];
    };
    const fast: InjectionHook = async () => {
      started.push("fast");
      await gate;
      return [{ kind: "cwd", content: "/srv" }];
    };
    const pending = collectInjected([slow, fast], ctx());
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(started).toEqual(["slow", "fast"]);
    open();
    const { injected, errors } = await pending;
    expect(errors).toEqual([]);
    expect(injected).toEqual([
      { kind: "memory", content: "likes tea" },
      { kind: "cwd", content: "/srv" },
    ]);
  });

  it("drops a failing hook's output, reports its error, and never throws", async () => {
    const boom = new Error("boom");
    function throwsSync(): InjectedContext[] {
      throw boom;
    }
    const rejects: InjectionHook = async () => {
      throw new Error("later");
    };
    const invalid = (() => [{ kind: "x" }]) as unknown as InjectionHook;
    const good: InjectionHook = () => [{ kind: "env", content: "TZ=UTC" }];
    const { injected, errors } = await collectInjected([throwsSync, good, rejects, invalid], ctx());
    expect(injected).toEqual([{ kind: "env", content: "TZ=UTC" }]);
    expect(errors.map((e) => e.index)).toEqual([0, 2, 3]);
    expect(errors[0]).toEqual({ index: 0, hook: "throwsSync", error: boom });
    expect(errors[1]!.hook).toBe("rejects");
    expect(errors[2]!.error).toBeInstanceOf(TypeError);
  });

  it("stops waiting when the signal aborts, keeping what finished", async () => {
    const controller = new AbortController();
    const never: InjectionHook = () => new Promise<InjectedContext[]>(() => {});
    const quick: InjectionHook = () => [{ kind: "env", content: "ok" }];
    const pending = collectInjected([never, quick], ctx(controller.signal));
    await new Promise((resolve) => setTimeout(resolve, 0));
    controller.abort(new Error("turn cancelled"));
    const { injected, errors } = await pending;
    expect(injected).toEqual([{ kind: "env", content: "ok" }]);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.index).toBe(0);
    expect((errors[0]!.error as Error).message).toBe("turn cancelled");
  });

  it("passes the context to each hook", async () => {
    const seen: string[] = [];
    const hook: InjectionHook = (c) => {
      seen.push(`${c.key}/${c.agent}/${c.session.id}`);
      return [];
    };
    await collectInjected([hook], ctx());
    expect(seen).toEqual([`${session.key}/main/${session.id}`]);
  });
});
