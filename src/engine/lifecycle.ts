import type { EngineConfig } from "../config/engine-config.js";
import { systemClock } from "../lifecycle/clock.js";
import { validateResetPolicy } from "../lifecycle/reset-policy.js";
import { DEFAULT_RETENTION, type RetentionPolicy } from "../lifecycle/retention.js";
import { DEFAULT_RESET_TRIGGERS, validateResetTriggers } from "../lifecycle/triggers.js";
import type { TurnLifecycle } from "../turns/turn-deps.js";

export type EngineLifecycle = TurnLifecycle & { retention: RetentionPolicy };

/** The config's reset triggers, reset policy, archive and retention rules and clock, checked. */
export function lifecycleOf(config: EngineConfig): EngineLifecycle {
  const lifecycle = config.lifecycle ?? {};
  const resetTriggers = lifecycle.resetTriggers ?? DEFAULT_RESET_TRIGGERS;
  validateResetTriggers(resetTriggers);
  const policy = lifecycle.reset ?? {};
  validateResetPolicy(policy);
  return {
    resetTriggers,
    policy,
    keepArchive: lifecycle.keepArchive ?? true,
    clock: lifecycle.clock ?? systemClock,
    retention: lifecycle.retention ?? DEFAULT_RETENTION,
  };
}
