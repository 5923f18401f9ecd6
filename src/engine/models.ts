import { modelSummarizer } from "../compaction/summarizers/model.js";
import type { CompactionThread } from "../compaction/thread.js";
import type { ModelConfig } from "../config/engine-config.js";
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
