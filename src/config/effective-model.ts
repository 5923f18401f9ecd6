/** What a session may override to pick its model: a name under `models:`, or a provider. */
export interface ModelChoice {
  model?: unknown;
  provider?: unknown;
}

/**
 * The model (a name under `models:`) a session uses, ZeroClaw's "a specific conversation can be configured
 * to use a different provider or model": its own `model`; else, with a `provider` of its own, `fallback`
 * when that is of the provider, otherwise the first configured model of it; else `fallback` (the agent's,
 * the compaction's or the titles' model). Names `models:` does not have are never returned for a choice.
 */
export function effectiveModelName(
  choice: ModelChoice,
  models: Readonly<Record<string, { provider: string }>> | ReadonlyMap<string, { provider: string }>,
  fallback: string | undefined,
): string | undefined {
  const entries: Array<[string, { provider: string }]> =
    models instanceof Map ? [...models.entries()] : Object.entries(models);
  const { model, provider } = choice;
  if (typeof model === "string" && entries.some(([name]) => name === model)) return model;
  if (typeof provider === "string") {
    const current = entries.find(([name]) => name === fallback)?.[1];
    if (current?.provider === provider) return fallback;
    return entries.find(([, m]) => m.provider === provider)?.[0] ?? fallback;
  }
  return fallback;
}
