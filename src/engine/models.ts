import { modelSummarizer } from "../compaction/summarizers/model.js";
import type { CompactionThread } from "../compaction/thread.js";
import type { ModelConfig } from "../config/engine-config.js";
import { type LedgerSlot, meteredModel } from "../ledger/metered-model.js";
import type { ModelPrice } from "../ledger/price.js";
import { SessiondError } from "../model/errors.js";
import type { Summarizer } from "../model/summarizer.js";
import type { TextModel } from "../model/text-model.js";
import { createTextModel } from "../runtimes/llm/index.js";
import { DEFAULT_OPENAI_BASE_URL } from "../runtimes/model.js";

/** The config's models by name: an OpenAI or Anthropic client each, or a TextModel passed in. */
export function buildModels(configs: Record<string, ModelConfig | TextModel>): Map<string, TextModel> {
  const models = new Map<string, TextModel>();
  for (const [name, m] of Object.entries(configs)) {
    if ("complete" in m) {
      models.set(name, m);
      continue;
    }
    const { provider, ...rest } = m;
    models.set(
      name,
      provider === "openai"
        ? createTextModel({ provider, ...rest, baseUrl: rest.baseUrl ?? DEFAULT_OPENAI_BASE_URL })
        : createTextModel({ provider, ...rest }),
    );
  }
  return models;
}

/**
 * The models with each call recorded in the ledger of `slot`, priced by the config's `price` (a model given
 * built may carry its own `price`, as the CLI's lazily built ones do).
 */
export function meteredModels(
  models: Map<string, TextModel>,
  configs: Record<string, ModelConfig | TextModel>,
  slot: LedgerSlot,
): Map<string, TextModel> {
  const metered = new Map<string, TextModel>();
  for (const [name, model] of models) {
    const price = (configs[name] as { price?: ModelPrice } | undefined)?.price;
    metered.set(name, meteredModel(model, price, slot));
  }
  return metered;
}

export function modelNamed(name: string, models: Map<string, TextModel>, where: string): TextModel {
  const model = models.get(name);
  if (!model) {
    const known = [...models.keys()].join(", ") || "none";
    throw new SessiondError(
      "CONFIG_INVALID",
      `${where}: no model named ${JSON.stringify(name)} (models: ${known})`,
    );
  }
  return model;
}

/** The summariser named in the config; none: the offline one, on the compaction thread. */
export function summarizerOf(
  name: string | undefined,
  models: Map<string, TextModel>,
  thread: CompactionThread,
): Summarizer {
  return name === undefined ? thread.offline : modelSummarizer(modelNamed(name, models, "compaction.model"));
}
