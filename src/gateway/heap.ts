import { setFlagsFromString } from "node:v8";

/**
 * How much V8 lets the heap grow past what the last full collection kept before it collects again, in %,
 * in the gateway's process. V8 picks up to 300 % on a machine with a large heap limit: with 0.9 MB
 * messages, whose copies (body, parsed text, stored row, reply) are garbage a moment later, the
 * gateway's RSS went to 468 MB and stayed at 331 MB idle while the live heap was 55 MB. At 20 % the
 * same workload peaks at 255 MB (see the memory bench).
 */
export const GATEWAY_HEAP_GROWTH_PERCENT = 20;

/** Sets the heap growth of this process (`sessiond serve` does; an embedder decides for its own). */
export function limitHeapGrowth(percent = GATEWAY_HEAP_GROWTH_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${Math.max(1, Math.floor(percent))}`);
}
