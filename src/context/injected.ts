import type { Session } from "../model/session.js";
import type { ChatMessage } from "./chat-message.js";

/** Context a hook supplies fresh before every turn (memory recall, environment, working directory…). */
export interface InjectedContext {
  kind: string;
  content: string;
}

export interface InjectionContext {
  key: string;
  agent: string;
  session: Session;
  signal: AbortSignal;
}

export type InjectionHook = (ctx: InjectionContext) => Promise<InjectedContext[]> | InjectedContext[];

export interface InjectionError {
  /** The hook's position in the list given to `collectInjected`. */
  index: number;
  /** The hook function's name, or `hook #<index>`. */
  hook: string;
  error: unknown;
}

export interface CollectedInjections {
  /** The contexts of the hooks that succeeded, in hook order (not completion order). */
  injected: InjectedContext[];
  errors: InjectionError[];
}

/**
 * Runs all hooks at once. A hook that throws, rejects, returns something that is not a list of
 * `{kind, content}` strings, or has not finished when `ctx.signal` aborts contributes nothing and is
 * reported in `errors` for the caller to log. Never throws or rejects.
 */
export async function collectInjected(
  hooks: readonly InjectionHook[],
  ctx: InjectionContext,
): Promise<CollectedInjections> {
  if (hooks.length === 0) return { injected: [], errors: [] };
  const aborted = abortPromise(ctx.signal);
  const settled = await Promise.allSettled(
    hooks.map((hook) => Promise.race([Promise.resolve().then(() => hook(ctx)), aborted.promise])),
  );
  aborted.dispose();

  const injected: InjectedContext[] = [];
  const errors: InjectionError[] = [];
  settled.forEach((result, index) => {
    const hook = hooks[index]?.name || `hook #${index}`;
    if (result.status === "rejected") {
      errors.push({ index, hook, error: result.reason });
    } else if (!isContextList(result.value)) {
      errors.push({
        index,
        hook,
        error: new TypeError(`${hook} returned something other than InjectedContext[]`),
      });
    } else {
      for (const item of result.value) injected.push({ kind: item.kind, content: item.content });
    }
  });
  return { injected, errors };
}

function abortPromise(signal: AbortSignal): { promise: Promise<never>; dispose: () => void } {
  let onAbort = (): void => {};
  const promise = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason ?? new Error("aborted"));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  // Rejections are consumed through Promise.race; this keeps an unraced one from being "unhandled".
  promise.catch(() => {});
  return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}

function isContextList(value: unknown): value is InjectedContext[] {
  return (
    Array.isArray(value) &&
    value.every(
      (item: unknown) =>
        typeof item === "object" &&
        item !== null &&
        typeof (item as InjectedContext).kind === "string" &&
        typeof (item as InjectedContext).content === "string",
    )
  );
}

/** The chat message an injected context becomes: a user message headed `[Auto-injected context: <kind>]`. */
export function injectedMessage(context: InjectedContext): ChatMessage {
  return {
    role: "user",
    content: `[Auto-injected context: ${context.kind}]\n${context.content}`,
    autoInjected: true,
  };
}

/** The messages without the auto-injected ones (those marked `autoInjected`), e.g. before storing a turn. */
export function stripInjected(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.filter((message) => message.autoInjected !== true);
}
