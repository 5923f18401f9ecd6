import { createRequire } from "node:module";
import type { Temporal as TemporalNamespace } from "temporal-polyfill";

export type TemporalApi = typeof TemporalNamespace;

let loaded: TemporalApi | undefined;

/**
 * temporal-polyfill (the runtime's own Temporal where it has one), loaded on the first daily-reset
 * computation: it costs tens of milliseconds at start-up that commands without a daily rule never pay.
 */
export function temporal(): TemporalApi {
  loaded ??= (createRequire(import.meta.url)("temporal-polyfill") as { Temporal: TemporalApi }).Temporal;
  return loaded;
}
