// The module the store contract's child processes open a store with, as a user's project has it: plain
// JavaScript importing sessiond by its package name, so the child needs no loader.
import { openStore } from "sessiond/store";

export const open = (config) => openStore(config);
