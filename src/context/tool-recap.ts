import type { ToolCall } from "../model/entry.js";
import { redactSecrets } from "../secrets/index.js";

/** Distinct calls listed in a recap before the rest are only counted. */
export const RECAP_MAX_DISTINCT = 8;

/** The id a failed call is stored under (behaviours §7). */
export const FAILED_CALL_ID = "failed";

interface RecapItem {
  text: string;
  count: number;
}

/**
 * The one line a later turn reads at the start of an assistant reply that made tool calls (behaviours §7):
 *
 * `[Tool calls behind this reply, recorded by sessiond; results not kept: datetime {"timezone":"UTC"} ×2; search {"q":"x"} (failed)]`
 *
 * Calls with the same name, arguments (key order ignored) and outcome collapse into one item with `×N`;
 * empty arguments are left out; failed calls (id `failed`) are marked `(failed)`; items are separated by
 * `; ` in first-seen order. After eight distinct items the rest are counted: `; and N more` (N calls,
 * repeats included). No calls: the empty string.
 */
export function toolCallRecap(calls: readonly ToolCall[], label = "sessiond"): string {
  if (calls.length === 0) return "";
  const items = new Map<string, RecapItem>();
  for (const call of calls) {
    const failed = call.id === FAILED_CALL_ID;
    const identity = `${call.name}\u0000${canonicalJson(call.arguments)}\u0000${failed}`;
    const item = items.get(identity);
    if (item !== undefined) {
      item.count += 1;
      continue;
    }
    const args = Object.keys(call.arguments).length > 0 ? ` ${JSON.stringify(call.arguments)}` : "";
    items.set(identity, { text: `${call.name}${args}${failed ? " (failed)" : ""}`, count: 1 });
  }
  const all = [...items.values()];
  const listed = all
    .slice(0, RECAP_MAX_DISTINCT)
    .map((item) => `${item.text}${item.count > 1 ? ` ×${item.count}` : ""}`);
  const rest = all.slice(RECAP_MAX_DISTINCT).reduce((sum, item) => sum + item.count, 0);
  if (rest > 0) listed.push(`and ${rest} more`);
  // Stored calls are already scrubbed; this guards calls that reached history some other way (imports).
  return redactSecrets(
    `[Tool calls behind this reply, recorded by ${label}; results not kept: ${listed.join("; ")}]`,
  );
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === "object" && item !== null && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
