import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);

/**
 * A package's ES module, loaded synchronously on first use: for packages that cost tens of milliseconds at
 * start-up that most commands never need (zod for entries, Temporal for daily resets). Resolved as
 * `import` would and loaded with `require` of that file (Node 20.19+), so it is the very instance a static
 * `import` elsewhere in the process gets: never a second copy.
 */
export function loadSync<T>(specifier: string): T {
  return require(fileURLToPath(import.meta.resolve(specifier))) as T;
}

/** `loadSync` of one package, kept after the first call. */
export function lazyModule<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= loadSync<T>(specifier);
    return loaded;
  };
}
