import type { EntryInput } from "../../model/entry.js";
import type { SessionInit } from "../../model/session.js";
import type { Store } from "../store.js";
import type { StoreFactory } from "./factory.js";

/** The store under test, reopened by some cases, and the directory the factory keeps it in. */
export interface Harness {
  store: Store;
  dir: string;
}

export const init = (createdBy = "u1", agent = "main", channel = "telegram"): SessionInit => ({
  agent,
  channel,
  chatType: "direct",
  createdBy,
});

export const msg = (content: string, extra: Partial<EntryInput> = {}): EntryInput =>
  ({ type: "message", role: "user", content, ...extra }) as EntryInput;

export const contentOf = (entry: { type: string; content?: unknown }): string =>
  entry.type === "message" ? String(entry.content) : "";

/** The factory as the cases see it: `open` gives a Store (a driver already run by a LogStore). */
export type OpenedFactory = Omit<StoreFactory, "open"> & { open(dir: string): Promise<Store> };
