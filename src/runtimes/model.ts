import type Anthropic from "@anthropic-ai/sdk";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { ModelPrice } from "../ledger/price.js";
import { type ReportedUsage, readUsage } from "../ledger/usage.js";
import { SessiondError } from "../model/errors.js";
import type { RuntimeEvent, RuntimeMessage, RuntimeRun } from "../model/runtime.js";
import type { ModelEndpoint } from "../model/text-model.js";
import { chatSpan } from "../tracing/spans.js";
import type { DescribedRuntime } from "./echo.js";
import { createAnthropicClient } from "./llm/anthropic.js";
import { LlmError, toLlmError } from "./llm/errors.js";
import { type ChatResult, createOpenAiClient, streamChat } from "./llm/openai-chat.js";
import { toolRound } from "./tool-round.js";

export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1";
/** Anthropic requires max_tokens; this is the reply budget when the config gives none. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;
/** Requests per run when the run has tools: the model may call tools in all but the last. */
export const MAX_TOOL_ROUNDS = 4;

export interface ModelRuntimeConfig extends ModelEndpoint {
  provider: "openai" | "anthropic";
  temperature?: number;
  maxTokens?: number;
  /** Anthropic only: false sends one non-streaming request, its text arriving as one delta. Default true. */
  stream?: boolean;
  /** USD per million tokens, for the cost ledger (config `models.<name>.price`); absent: unknown. */
  price?: ModelPrice;
}

export interface ModelRuntime extends DescribedRuntime {
  readonly kind: "model";
  readonly provider: "openai" | "anthropic";
  readonly model: string;
  readonly baseUrl: string | undefined;
  readonly contextWindow: number | undefined;
  readonly price: ModelPrice | undefined;
  run(run: RuntimeRun): AsyncGenerator<RuntimeEvent, void, undefined>;
}

/**
 * A language model API as a runtime: the whole assembled context goes with every request, so it keeps no
 * runtime session. The client is built here, so a bad config or a missing key fails at start-up (an
 * INVALID_ARGUMENT naming the variable, never a value); request failures are LlmErrors scrubbed of the key.
 */
export function modelRuntime(config: ModelRuntimeConfig): ModelRuntime {
  if (config.provider !== "openai" && config.provider !== "anthropic") {
    const provider: unknown = (config as { provider?: unknown }).provider;
    throw new SessiondError("INVALID_ARGUMENT", `unknown model provider ${JSON.stringify(provider)}`);
  }
  const run = config.provider === "anthropic" ? anthropicRun(config) : openAiRun(config);
  const baseUrl = config.provider === "openai" ? (config.baseUrl ?? DEFAULT_OPENAI_BASE_URL) : config.baseUrl;
  return {
    kind: "model",
    provider: config.provider,
    model: config.model,
    baseUrl,
    contextWindow: config.contextWindow,
    price: config.price,
    describe: () => {
      const where = baseUrl === undefined ? "" : ` at ${baseUrl}`;
      const window =
        config.contextWindow === undefined
          ? ""
          : `, context window ${config.contextWindow.toLocaleString("en-US")} tokens`;
      return `model (${config.provider} ${config.model}${where}${window})`;
    },
    run,
  };
}

/** The endpoint part of a runtime config: what the provider's client is built from. */
function endpointOf(config: ModelRuntimeConfig): ModelEndpoint {
  const { provider: _p, temperature: _t, maxTokens: _m, stream: _s, price: _price, ...endpoint } = config;
  return endpoint;
}

type RunFn = (run: RuntimeRun) => AsyncGenerator<RuntimeEvent, void, undefined>;

function openAiRun(config: ModelRuntimeConfig): RunFn {
  const client = createOpenAiClient({
    ...endpointOf(config),
    baseUrl: config.baseUrl ?? DEFAULT_OPENAI_BASE_URL,
  });
  return async function* (run) {
    const messages: ChatCompletionMessageParam[] = run.messages.map((m) => ({
      role: m.role,
      content: m.content,
    }));
    const tools = run.tools;
    for (let round = 1; ; round++) {
      const stream = streamChat(client, {
        messages,
        model: config.model,
        signal: run.signal,
        ...(tools?.definitions.length ? { tools: tools.definitions } : {}),
        maxTokens: config.maxTokens,
        temperature: config.temperature,
      });
      let result: ChatResult | undefined;
      for await (const event of stream) {
        if (event.type === "text") yield { type: "text", delta: event.delta };
        else result = event.result;
      }
      if (!result) return;
      const usage: RuntimeEvent | undefined = result.usage
        ? { type: "usage", model: result.model, ...result.usage }
        : undefined;
      if (!tools || result.toolCalls.length === 0) {
        // Without tools the calls are only reported, as the model made them.
        for (const call of result.toolCalls) {
          yield {
            type: "tool_call",
            ...(call.id ? { id: call.id } : {}),
            name: call.name,
            arguments: call.arguments,
          };
        }
        if (usage) yield usage;
        return;
      }
      if (usage) yield usage;
      const calls = result.toolCalls.map((call, i) => ({ ...call, id: call.id || `call_${round}_${i}` }));
      if (round >= MAX_TOOL_ROUNDS) {
        // Out of rounds: the calls are recorded, not executed, and the reply ends here.
        for (const call of calls) {
          yield { type: "tool_call", id: call.id, name: call.name, arguments: call.arguments, failed: true };
        }
        return;
      }
      messages.push({
        role: "assistant",
        content: result.text || null,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: "function" as const,
          function: { name: call.name, arguments: call.arguments },
        })),
      });
      const outcome = yield* toolRound(tools, calls, run);
      for (const result of outcome.results) {
        messages.push({ role: "tool", tool_call_id: result.id, content: result.content });
      }
      for (const steer of outcome.steers) messages.push({ role: "user", content: steer });
    }
  };
}

const ANTHROPIC = "anthropic";

function anthropicRun(config: ModelRuntimeConfig): RunFn {
  const anthropic = createAnthropicClient(endpointOf(config));
  const streaming = config.stream ?? true;
  return async function* (run) {
    const { sdk, client } = await anthropic.load();
    const { system, messages: opening } = anthropicMessages(run.messages);
    const messages: Anthropic.MessageParam[] = opening;
    const tools = run.tools;
    const offered = tools?.definitions.map((d) => ({
      name: d.function.name,
      description: d.function.description,
      input_schema: d.function.parameters as Anthropic.Tool.InputSchema,
    }));
    for (let round = 1; ; round++) {
      const body = {
        model: config.model,
        max_tokens: config.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
        messages,
        ...(system ? { system } : {}),
        ...(offered?.length ? { tools: offered } : {}),
        ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
      };
      let text = "";
      let trailing: RuntimeEvent[] = [];
      const span = chatSpan(ANTHROPIC, config.model, config.baseUrl);
      try {
        if (!streaming) {
          const message = await client.messages.create(body, { signal: run.signal, headers: span.headers() });
          for (const event of messageEvents(message, config.model)) {
            if (event.type === "text") {
              text += event.delta;
              yield event;
            } else trailing.push(event);
          }
        } else {
          const stream = await client.messages.create(
            { ...body, stream: true },
            { signal: run.signal, headers: span.headers() },
          );
          const events = streamEvents(stream, config.model);
          for (let step = await events.next(); ; step = await events.next()) {
            if (step.done) {
              trailing = step.value;
              break;
            }
            if (step.value.type === "text") text += step.value.delta;
            yield step.value;
          }
        }
      } catch (error) {
        throw span.fail(toLlmError(error, ANTHROPIC, sdk, anthropic.secret, run.signal));
      }
      // Like the OpenAI client, the SDK may end a stream quietly when its signal aborts: that is no reply.
      if (run.signal.aborted)
        throw span.fail(new LlmError(ANTHROPIC, "aborted", `${ANTHROPIC}: request aborted`));
      span.endWith(trailing);
      const calls = trailing.flatMap((e) => (e.type === "tool_call" ? [{ ...e, id: e.id ?? "" }] : []));
      if (!tools || calls.length === 0) {
        // Without tools the calls are only reported, as the model made them.
        yield* trailing;
        return;
      }
      yield* trailing.filter((e) => e.type !== "tool_call");
      if (round >= MAX_TOOL_ROUNDS) {
        for (const call of calls) yield { ...call, failed: true };
        return;
      }
      messages.push({
        role: "assistant",
        content: [
          ...(text ? [{ type: "text" as const, text }] : []),
          ...calls.map((call) => ({
            type: "tool_use" as const,
            id: call.id,
            name: call.name,
            input: toolInput(call.arguments),
          })),
        ],
      });
      const outcome = yield* toolRound(tools, calls, run);
      // Anthropic wants every tool_result first in the next user message; steering text may follow them.
      messages.push({
        role: "user",
        content: [
          ...outcome.results.map((result) => ({
            type: "tool_result" as const,
            tool_use_id: result.id,
            content: result.content,
            ...(result.failed ? { is_error: true } : {}),
          })),
          ...outcome.steers.map((text) => ({ type: "text" as const, text })),
        ],
      });
    }
  };
}

/** A tool call's input as the API wants it back: an object, whatever the model streamed. */
function toolInput(args: unknown): Record<string, unknown> {
  let value = args;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value || "{}");
    } catch {
      return {};
    }
  }
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function* messageEvents(message: Anthropic.Message, fallbackModel: string): Generator<RuntimeEvent> {
  const text = (message.content ?? []).map((block) => (block.type === "text" ? block.text : "")).join("");
  if (text) yield { type: "text", delta: text };
  for (const block of message.content ?? []) {
    if (block.type === "tool_use") {
      yield { type: "tool_call", id: block.id, name: block.name, arguments: block.input };
    }
  }
  if (message.usage) {
    yield { type: "usage", model: message.model || fallbackModel, ...readUsage("anthropic", message.usage) };
  }
}

/**
 * Yields text deltas as they arrive; tool calls and usage are only whole at the end of the stream, so they
 * are returned, for the caller to yield once it knows the stream was not cut short by an abort.
 */
async function* streamEvents(
  stream: AsyncIterable<Anthropic.RawMessageStreamEvent>,
  fallbackModel: string,
): AsyncGenerator<RuntimeEvent, RuntimeEvent[], undefined> {
  const after: RuntimeEvent[] = [];
  let model = fallbackModel;
  // message_start carries input and cache counts, message_delta the output (and, lately, counts again).
  let usage: ReportedUsage = {};
  const calls = new Map<number, { id: string; name: string; input: unknown; json: string }>();
  for await (const event of stream) {
    switch (event.type) {
      case "message_start":
        if (event.message.model) model = event.message.model;
        usage = { ...usage, ...readUsage("anthropic", event.message.usage) };
        break;
      case "content_block_start":
        if (event.content_block.type === "tool_use") {
          const { id, name, input } = event.content_block;
          calls.set(event.index, { id, name, input, json: "" });
        } else if (event.content_block.type === "text" && event.content_block.text) {
          yield { type: "text", delta: event.content_block.text };
        }
        break;
      case "content_block_delta":
        if (event.delta.type === "text_delta") {
          if (event.delta.text) yield { type: "text", delta: event.delta.text };
        } else if (event.delta.type === "input_json_delta") {
          const call = calls.get(event.index);
          if (call) call.json += event.delta.partial_json;
        }
        break;
      case "message_delta":
        usage = { ...usage, ...readUsage("anthropic", event.usage) };
        break;
      default:
        break;
    }
  }
  for (const [, call] of [...calls.entries()].sort((a, b) => a[0] - b[0])) {
    after.push({ type: "tool_call", id: call.id, name: call.name, arguments: call.json || call.input });
  }
  if (usage.inputTokens !== undefined || usage.outputTokens !== undefined) {
    after.push({ type: "usage", model, ...usage });
  }
  return after;
}

/**
 * Anthropic takes the system prompt apart from the conversation: the system messages (instructions,
 * injected context) become it, in order. Consecutive messages of one role are merged, and a conversation
 * that would open with the assistant gets a placeholder user turn first, since the API wants a user first.
 */
export function anthropicMessages(messages: readonly RuntimeMessage[]): {
  system: string;
  messages: Array<{ role: "user" | "assistant"; content: string }>;
} {
  const system: string[] = [];
  const turns: Array<{ role: "user" | "assistant"; content: string }> = [];
  for (const message of messages) {
    if (message.role === "system") {
      if (message.content) system.push(message.content);
      continue;
    }
    const last = turns.at(-1);
    if (last && last.role === message.role) last.content += `\n\n${message.content}`;
    else turns.push({ role: message.role, content: message.content });
  }
  if (turns[0]?.role === "assistant")
    turns.unshift({ role: "user", content: "(continuing the conversation)" });
  return { system: system.join("\n\n"), messages: turns };
}
