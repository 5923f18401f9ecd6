import type { RuntimeEvent, RuntimeRun } from "../../src/model/runtime.js";

/** Builds runs of one conversation: `runOf(input, extra)` is a run with `input` as its only message. */
export function runsOf(
  key: string,
  agent: string,
): (input: string, extra?: Partial<RuntimeRun>) => RuntimeRun {
  return (input, extra = {}) => ({
    key,
    agent,
    messages: [{ role: "user", content: input }],
    input,
    session: { id: "s", entryCount: 1, approxTokens: 3 },
    signal: new AbortController().signal,
    ...extra,
  });
}

/** Every event a run yields, in order. */
export async function collect(events: AsyncIterable<RuntimeEvent>): Promise<RuntimeEvent[]> {
  const out: RuntimeEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}
