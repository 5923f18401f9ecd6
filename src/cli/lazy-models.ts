import type { EngineConfig, ModelConfig } from "../config/engine-config.js";
import type { Completion, CompletionRequest, TextModel } from "../model/text-model.js";

/**
 * The config's model endpoints as models that are built on their first call. A command that never calls
 * a model (list, show, search, export, agents, ...) then never needs its key, its package or a valid URL;
 * one that does (compact) gets the same error the engine would give at start-up, when it calls.
 */
export function withLazyModels(config: EngineConfig): EngineConfig {
  if (!config.models) return config;
  const models = Object.fromEntries(
    Object.entries(config.models).map(([name, model]) => [
      name,
      "complete" in model ? model : lazyModel(model),
    ]),
  );
  return { ...config, models };
}

function lazyModel(config: ModelConfig): TextModel {
  let built: Promise<TextModel> | undefined;
  const build = async (): Promise<TextModel> => {
    const [{ createTextModel }, { DEFAULT_OPENAI_BASE_URL }] = await Promise.all([
      import("../runtimes/llm/index.js"),
      import("../runtimes/model.js"),
    ]);
    return config.provider === "openai"
      ? createTextModel({ ...config, provider: "openai", baseUrl: config.baseUrl ?? DEFAULT_OPENAI_BASE_URL })
      : createTextModel({ ...config, provider: "anthropic" });
  };
  return {
    provider: config.provider,
    model: config.model,
    ...(config.contextWindow !== undefined ? { contextWindow: config.contextWindow } : {}),
    // Read by the engine's metered models (the ledger's price).
    ...(config.price ? { price: config.price } : {}),
    async complete(request: CompletionRequest): Promise<Completion> {
      built ??= build();
      built.catch(() => {
        built = undefined;
      });
      return (await built).complete(request);
    },
  };
}
