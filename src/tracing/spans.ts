import { AsyncLocalStorage } from "node:async_hooks";
import type { Attributes, Context, Span } from "@opentelemetry/api";
import { parseTraceparent, traceparentOf } from "./traceparent.js";
import { type ActiveTracing, activeTracing } from "./tracer.js";

/** What the spans started below the current call inherit: their parent, the conversation, the usage tally. */
interface TraceScope {
  parent?: Context;
  conversationId?: string;
  purpose?: string;
  usage?: { input: number; output: number };
}

const scopes = new AsyncLocalStorage<TraceScope>();
/** The caller's trace context of an admitted input, kept until its turn runs (in its key's lane). */
const incoming = new WeakMap<object, Context>();

/** Runs `fn` under an incoming W3C trace context (the HTTP request's `traceparent`/`tracestate`). */
export function withIncomingTrace<T>(
  traceparent: string | undefined,
  tracestate: string | undefined,
  fn: () => T,
): T {
  const t = activeTracing();
  const remote = t && traceparent ? parseTraceparent(t.api, traceparent, tracestate) : undefined;
  return remote ? scopes.run({ parent: remote }, fn) : fn();
}

/** Remembers the caller's trace context for `input`, so that the turn that runs it later joins the trace. */
export function noteIncomingTrace(input: object): void {
  const parent = scopes.getStore()?.parent;
  if (parent && activeTracing()) incoming.set(input, parent);
}

/**
 * `traceparent` (and `tracestate`) naming the span the current call runs under (a turn's `invoke_agent`),
 * for what the runtime sends out: A2A requests, Claude Code and Codex processes. Undefined when tracing is
 * off or nothing is being traced here.
 */
export function currentTraceHeaders(): Record<string, string> | undefined {
  const t = activeTracing();
  const parent = scopes.getStore()?.parent;
  const span = t && parent ? t.api.trace.getSpan(parent) : undefined;
  return span ? traceparentOf(span) : undefined;
}

function errorType(error: unknown): string {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return typeof code === "string" ? code : typeof name === "string" ? name : "_OTHER";
}

function finish(t: ActiveTracing, span: Span, error: unknown): void {
  if (error !== undefined) {
    span.setAttribute("error.type", errorType(error));
    span.setStatus({ code: t.api.SpanStatusCode.ERROR });
  }
  span.end();
}

/** `invoke_agent {agent}` around a turn: the chat and tool spans of the runtime are its children. */
export async function tracedTurn<T>(
  input: object,
  agent: string,
  sessionId: string,
  fn: () => Promise<T>,
): Promise<T> {
  const t = activeTracing();
  if (!t) return fn();
  const conversationId = t.conversationId(sessionId);
  const span = t.tracer.startSpan(
    `invoke_agent ${agent}`,
    {
      kind: t.api.SpanKind.INTERNAL,
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.conversation.id": conversationId,
      },
    },
    incoming.get(input) ?? t.api.ROOT_CONTEXT,
  );
  const usage = { input: 0, output: 0 };
  const scope = { parent: t.api.trace.setSpan(t.api.ROOT_CONTEXT, span), conversationId, usage };
  try {
    const result = await scopes.run(scope, fn);
    if (usage.input > 0 || usage.output > 0) {
      span.setAttributes({
        "gen_ai.usage.input_tokens": usage.input,
        "gen_ai.usage.output_tokens": usage.output,
      });
    }
    finish(t, span, undefined);
    return result;
  } catch (error) {
    finish(t, span, error);
    throw error;
  }
}

/** Compaction and titles: their model calls carry the session's conversation id and say what they were for. */
export function withConversation<T>(sessionId: string, purpose: "compaction" | "title", fn: () => T): T {
  const t = activeTracing();
  if (!t) return fn();
  return scopes.run({ ...scopes.getStore(), conversationId: t.conversationId(sessionId), purpose }, fn);
}

export interface ChatSpan {
  /** Headers for the model request: `traceparent` naming this span, when tracing is on. */
  headers(): Record<string, string> | undefined;
  end(result: {
    model?: string;
    inputTokens?: number;
    outputTokens?: number;
    finishReason?: string | null;
  }): void;
  /** Ends the span with the usage event among a model call's trailing runtime events. */
  endWith(
    events: ReadonlyArray<{ type: string; model?: string; inputTokens?: number; outputTokens?: number }>,
  ): void;
  /** Ends the span as failed and gives `error` back, to be thrown. */
  fail<E>(error: E): E;
}

const NO_CHAT: ChatSpan = {
  headers: () => undefined,
  end: () => {},
  endWith: () => {},
  fail: (error) => error,
};

/** `chat {model}`, a client span around one model request. */
export function chatSpan(provider: string, model: string, serverAddress?: string): ChatSpan {
  const t = activeTracing();
  if (!t) return NO_CHAT;
  const scope = scopes.getStore();
  const attributes: Attributes = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": provider,
    "gen_ai.request.model": model,
  };
  if (scope?.conversationId) attributes["gen_ai.conversation.id"] = scope.conversationId;
  if (scope?.purpose) attributes["sessiond.call.purpose"] = scope.purpose;
  if (serverAddress) {
    try {
      const url = new URL(serverAddress);
      attributes["server.address"] = url.hostname;
      if (url.port) attributes["server.port"] = Number(url.port);
    } catch {
      // Not a URL: left out.
    }
  }
  const span = t.tracer.startSpan(
    `chat ${model}`,
    { kind: t.api.SpanKind.CLIENT, attributes },
    scope?.parent ?? t.api.ROOT_CONTEXT,
  );
  let ended = false;
  return {
    headers: () => traceparentOf(span),
    end(result) {
      if (ended) return;
      ended = true;
      if (result.model) span.setAttribute("gen_ai.response.model", result.model);
      if (result.finishReason) span.setAttribute("gen_ai.response.finish_reasons", [result.finishReason]);
      if (result.inputTokens !== undefined)
        span.setAttribute("gen_ai.usage.input_tokens", result.inputTokens);
      if (result.outputTokens !== undefined)
        span.setAttribute("gen_ai.usage.output_tokens", result.outputTokens);
      if (scope?.usage) {
        scope.usage.input += result.inputTokens ?? 0;
        scope.usage.output += result.outputTokens ?? 0;
      }
      finish(t, span, undefined);
    },
    endWith(events) {
      const usage = events.find((e) => e.type === "usage");
      this.end(usage ? { ...usage, ...(usage.model ? {} : { model }) } : {});
    },
    fail(error) {
      if (ended) return error;
      ended = true;
      finish(t, span, error);
      return error;
    },
  };
}

/** `execute_tool {tool}` around one tool call; a failed result is an error of type `tool_error`. */
export async function tracedTool<T extends { failed?: boolean }>(
  call: { id: string; name: string },
  fn: () => Promise<T>,
): Promise<T> {
  const t = activeTracing();
  if (!t) return fn();
  const scope = scopes.getStore();
  const attributes: Attributes = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": call.name,
    "gen_ai.tool.call.id": call.id,
    "gen_ai.tool.type": "function",
  };
  if (scope?.conversationId) attributes["gen_ai.conversation.id"] = scope.conversationId;
  const span = t.tracer.startSpan(
    `execute_tool ${call.name}`,
    { kind: t.api.SpanKind.INTERNAL, attributes },
    scope?.parent ?? t.api.ROOT_CONTEXT,
  );
  try {
    const result = await fn();
    finish(t, span, result.failed ? { code: "tool_error" } : undefined);
    return result;
  } catch (error) {
    finish(t, span, error);
    throw error;
  }
}
