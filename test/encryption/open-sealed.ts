// The module the store contract's child processes open an encrypted store with (ChildStore in
// src/store/testing/children.ts): the key travels as base64 in the config, which crosses as JSON.

import { openStore, type StoreConfig } from "../../src/store/open.js";
import type { ChildStore } from "../../src/store/testing/children.js";

export type SealedConfig = StoreConfig & { keyBase64: string };

export const open = ({ keyBase64, ...config }: SealedConfig) =>
  openStore({ ...config, encryption: { key: Buffer.from(keyBase64, "base64") } } as StoreConfig);

export const sealedChild = (config: SealedConfig): ChildStore => ({
  module: new URL(import.meta.url).pathname,
  arg: config,
});
