import type * as Zod from "zod";
import { lazyModule } from "./load-sync.js";

/** zod, loaded on first use (about 100 ms of start-up that `route`, `sessions list` and the root import skip). */
export const zod: () => typeof Zod.z = (() => {
  const load = lazyModule<typeof Zod>("zod");
  return () => load().z;
})();

/** A schema built on first use, with the zod it needs. */
export function lazySchema<S>(build: (z: typeof Zod.z) => S): () => S {
  let schema: S | undefined;
  return () => {
    schema ??= build(zod());
    return schema;
  };
}
