import type { Temporal as TemporalNamespace } from "temporal-polyfill";
import { lazyModule } from "../model/load-sync.js";

export type TemporalApi = typeof TemporalNamespace;

const polyfill = lazyModule<{ Temporal: TemporalApi }>("temporal-polyfill");

/** temporal-polyfill (the runtime's own Temporal where it has one), loaded on the first daily-reset computation. */
export function temporal(): TemporalApi {
  return polyfill().Temporal;
}
