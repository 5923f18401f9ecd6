import { modelSummarizer } from "./compaction/summarizers/model.js";
import { effectiveModelName } from "./config/effective-model.js";
import type { Session } from "./model/session.js";
import type { Summarizer } from "./model/summarizer.js";
import type { TextModel } from "./model/text-model.js";

/**
 * Compaction's and titles' model for one session: the session's own `model` or `provider` override (a
 * configured model) in place of `compaction.model` / `titles.model`, as its turns use it.
 */
export function sessionModels(
  models: Map<string, TextModel>,
  configured: { summarizer: Summarizer; compaction?: string; titles?: string },
) {
  const summarizers = new Map<string, Summarizer>();
  return {
    summarizer(session: Session): Summarizer {
      const name = effectiveModelName(session.overrides, models, configured.compaction);
      const model = name === undefined || name === configured.compaction ? undefined : models.get(name);
      if (!model || name === undefined) return configured.summarizer;
      let summarizer = summarizers.get(name);
      if (!summarizer) {
        summarizer = modelSummarizer(model);
        summarizers.set(name, summarizer);
      }
      return summarizer;
    },
    title(session: Session): TextModel | undefined {
      const name = effectiveModelName(session.overrides, models, configured.titles);
      return name === undefined ? undefined : models.get(name);
    },
  };
}
