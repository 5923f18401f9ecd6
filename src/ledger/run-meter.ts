import type { Runtime, RuntimeEvent } from "../model/runtime.js";
import type { CostLedger } from "./entry.js";
import type { ModelPrice } from "./price.js";
import { recordCall, usageOf } from "./record.js";
import type { ReportedUsage, UsageShape } from "./usage.js";

type UsageEvent = Extract<RuntimeEvent, { type: "usage" }>;

interface RunOf {
  agent: string;
  sessionId: string;
  key: string;
}

/**
 * The ledger entries of one runtime run. A model runtime makes one request per round: each usage event is
 * one call, the first the turn's, the next ones after a tool round each. Claude Code and Codex run their own
 * loop and report the run once: one entry (kind turn) with their tokens and the run's measured cost.
 */
export class RunMeter {
  private calls = 0;
  private summed: ReportedUsage | undefined;
  private model: string | undefined;
  private measuredUsd: number | undefined;

  constructor(
    private readonly ledger: CostLedger | undefined,
    private readonly runtime: Runtime,
    private readonly run: RunOf,
  ) {}

  private get perCall(): boolean {
    return this.runtime.kind === "model";
  }

  /** A usage event: recorded at once for a model runtime, summed for the run otherwise. */
  async usage(event: UsageEvent): Promise<void> {
    if (!this.ledger) return;
    if (this.perCall) {
      this.calls += 1;
      await this.write(this.calls === 1 ? "turn" : "tool_round", event.model, usageOf(event));
      return;
    }
    if (event.model) this.model = event.model;
    const next: ReportedUsage = { ...this.summed };
    const add = usageOf(event);
    for (const name of Object.keys(add) as Array<keyof ReportedUsage>) {
      next[name] = (next[name] ?? 0) + (add[name] ?? 0);
    }
    this.summed = next;
  }

  /** The run's cost as measured from the runtime's own figures (Claude Code's total_cost_usd). */
  cost(usd: number | undefined): void {
    if (usd !== undefined) this.measuredUsd = (this.measuredUsd ?? 0) + usd;
  }

  /** Records the run's one entry (Claude Code, Codex) when it reported usage or a cost. */
  async finish(): Promise<void> {
    if (!this.ledger || this.perCall || (this.summed === undefined && this.measuredUsd === undefined)) return;
    const usage = {
      ...this.summed,
      ...(this.measuredUsd !== undefined ? { reportedUsd: this.measuredUsd } : {}),
    };
    await this.write("turn", this.model, usage);
  }

  private write(kind: "turn" | "tool_round", model: string | undefined, usage: ReportedUsage): Promise<void> {
    const described = this.runtime as { model?: unknown; price?: ModelPrice };
    const configured = typeof described.model === "string" ? described.model : this.runtime.kind;
    return recordCall(
      this.ledger,
      { ...this.run, kind, model: model || configured },
      shapeOf(this.runtime),
      usage,
      described.price,
    );
  }
}

/** Whose usage shape a runtime reports: Anthropic's (input without the cache) or OpenAI's (input with it). */
function shapeOf(runtime: Runtime): UsageShape {
  const provider = (runtime as { provider?: unknown }).provider;
  if (runtime.kind === "model") return provider === "anthropic" ? "anthropic" : "openai";
  return runtime.kind === "claude-code" ? "anthropic" : "openai";
}
