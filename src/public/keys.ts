/** `sessiond/keys`: envelope → key, scopes, identity links, key validation and safe file names. */
export * from "../keys/index.js";
