import type { Handler } from "../connection.js";
import * as chat from "./chat.js";
import * as conversations from "./conversations.js";
import * as sessions from "./sessions.js";
import * as watch from "./watch.js";

const METHODS: Readonly<Record<string, Handler>> = {
  "sessions.list": sessions.list,
  "sessions.kill": sessions.kill,
  "sessions.compact": sessions.compact,
  "sessions.subscribe": sessions.subscribe,
  "sessions.unsubscribe": sessions.unsubscribe,
  "conversations.list": conversations.list,
  "conversations.history": conversations.history,
  "chat.send": chat.send,
  "sessions.watch": watch.watch,
  "sessions.unwatch": watch.unwatch,
};

export function handlerFor(method: string): Handler | undefined {
  return Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
}

export const METHOD_NAMES: readonly string[] = Object.keys(METHODS);
