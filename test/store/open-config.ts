// The module the store contract's child processes open a store with (ChildStore in
// src/store/testing/children.ts): `open(config)` is openStore's.

import { openStore, type StoreConfig } from "../../src/store/open.js";
import type { ChildStore } from "../../src/store/testing/children.js";

export const open = (config: StoreConfig) => openStore(config);

/** A child that opens the store of `config`, from this repository's source (under tsx). */
export const configChild = (config: unknown): ChildStore => ({
  module: new URL(import.meta.url).pathname,
  arg: config,
});
