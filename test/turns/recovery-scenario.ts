import { expect } from "vitest";
import type { Engine } from "../../src/engine.js";
import type { Envelope } from "../../src/model/envelope.js";
import { newId } from "../../src/model/ids.js";
import type { Inbox } from "../../src/model/inbox.js";
import type { Store } from "../../src/store/store.js";
import { admissionOf, admittedEnvelope } from "../../src/turns/admission.js";

export const START = 10_000_000;

export function dm(id: string, text: string, platformMessageId?: string): Envelope {
  return {
    channel: "telegram",
    chat: { type: "direct", id },
    sender: { id },
    text,
    ...(platformMessageId ? { platformMessageId } : {}),
  };
}

const init = { agent: "main", channel: "telegram", chatType: "direct", createdBy: "test" } as const;

/** What a process killed mid-work leaves behind: inbox items in every stage, with or without entries. */
export async function crashedState(store: Store, inbox: Inbox): Promise<Record<string, string>> {
  let now = START - 11 * 60_000;
  const ids: Record<string, string> = {};
  const admit = async (name: string, key: string, envelope: Envelope) => {
    const id = newId(now);
    const stored = await inbox.admit(admissionOf(id, key, envelope, now));
    expect(stored.admitted).toBe(true);
    ids[name] = id;
    return { id, envelope: admittedEnvelope(id, envelope) };
  };
  // Admitted 11 minutes ago, never stored in its session: past the 10-minute default.
  await admit("stale", "telegram:3", dm("3", "an old question"));
  now = START - 1000;
  // Its turn stored the input and the reply; the crash came before the inbox heard.
  const answered = await admit("answered", "telegram:1", dm("1", "answered before the crash"));
  await store.append(
    "telegram:1",
    [
      {
        type: "message",
        role: "user",
        content: "answered before the crash",
        idempotencyKey: answered.envelope.platformMessageId as string,
        ts: now,
      },
      { type: "message", role: "assistant", content: "the reply", ts: now },
    ],
    { init },
  );
  // Its turn stored the input and was running when the process died.
  const cut = await admit("cut", "telegram:2", dm("2", "cut off mid-turn", "tg-7"));
  await store.append(
    "telegram:2",
    [
      {
        type: "message",
        role: "user",
        content: "cut off mid-turn",
        idempotencyKey: cut.envelope.platformMessageId as string,
        ts: now,
      },
    ],
    { init },
  );
  // Waiting in the queue: never stored in the session.
  await admit("first", "telegram:4", dm("4", "first waiting", "tg-8"));
  await admit("second", "telegram:4", dm("4", "second waiting"));
  return ids;
}

/**
 * Recovers what `seed` left (`crashedState` on the backend under test) with engines from `open` (a
 * ManualClock at START, debounce 0): every stage settled as it should be, and nothing replayed.
 */
export async function recoversEveryStage(
  seed: () => Promise<Record<string, string>>,
  open: () => Promise<Engine>,
  /** How the notes name what happened: a restart (one process), or a take-over (a shared inbox). */
  notes: { cut: unknown; stale: unknown } = {
    cut: expect.stringContaining("cut off by a restart"),
    stale: 'Not run after a restart: "an old question" waited 660 s, longer than turns.recover_max_age.',
  },
): Promise<void> {
  const ids = await seed();
  const engine = await open();
  expect(await engine.recover()).toEqual({ requeued: 2, answered: 1, interrupted: 2 });
  // FIFO on the key: once this one is answered, the two recovered ones were.
  await engine.turn(dm("4", "third, new"));
  const users = (await engine.history("telegram:4")).filter((e) => e.type === "message");
  expect(users.map((e) => (e.type === "message" ? `${e.role}:${e.content}` : ""))).toEqual([
    "user:first waiting",
    expect.stringMatching(/^assistant:/),
    "user:second waiting",
    expect.stringMatching(/^assistant:/),
    "user:third, new",
    expect.stringMatching(/^assistant:/),
  ]);
  const cut = await engine.history("telegram:2");
  expect(cut.map((e) => e.type)).toEqual(["message", "note"]);
  expect(cut[1]).toMatchObject({
    code: "TURN_INTERRUPTED",
    text: notes.cut,
  });
  const stale = await engine.history("telegram:3");
  expect(stale).toHaveLength(1);
  expect(stale[0]).toMatchObject({
    code: "TURN_INTERRUPTED",
    text: notes.stale,
  });
  expect((await engine.history("telegram:1")).map((e) => e.type)).toEqual(["message", "message"]);

  const state = async (name: string) => (await engine.turnStatus(ids[name] as string))?.state;
  expect(await state("answered")).toBe("done");
  expect(await state("cut")).toBe("interrupted");
  expect(await state("stale")).toBe("interrupted");
  expect(await state("first")).toBe("done");
  expect(await engine.turnStatus(ids.first as string)).toMatchObject({ reply: expect.any(String) });

  // A second start finds nothing left to do: nothing is replayed.
  expect(await engine.recover()).toEqual({ requeued: 0, answered: 0, interrupted: 0 });
  await engine.close();
  const again = await open();
  expect(await again.recover()).toEqual({ requeued: 0, answered: 0, interrupted: 0 });
  expect(await again.turnStatus(ids.second as string)).toMatchObject({
    state: "done",
    replyId: expect.any(String),
  });
  expect((await again.history("telegram:4")).filter((e) => e.type === "message")).toHaveLength(6);
}
