import { setImmediate as yieldToLoop } from "node:timers/promises";

/** How long a search may take in all, by default: past it, it returns what it found with `complete: false`. */
export const SEARCH_BUDGET_MS = 2_000;
/** The longest a search works before it lets the event loop run (other requests, `/health`). */
const SLICE_MS = 10;

/** How a search is run; not part of the public query (the gateway and CLI use the defaults). */
export interface SearchOptions {
  /** The search's time budget, ms (default `SEARCH_BUDGET_MS`); 0 stops after the first unit of work. */
  budgetMs?: number;
}

/**
 * A search's time budget: its work is done in units (one message read and matched, one window ranked), and
 * between units it yields to the event loop every `SLICE_MS` (`pace`) and stops once the budget is spent
 * (`spent`): the search then returns the hits of what it read, marked incomplete.
 */
export class SearchBudget {
  private readonly deadline: number;
  private sliceStart = performance.now();
  /** Set once `spent` said yes: the result is not complete. */
  exhausted = false;

  constructor(options: SearchOptions = {}) {
    const budget = options.budgetMs ?? SEARCH_BUDGET_MS;
    this.deadline = this.sliceStart + Math.max(0, budget);
  }

  /** True once the budget is spent (and from then on). */
  spent(): boolean {
    if (!this.exhausted && performance.now() >= this.deadline) this.exhausted = true;
    return this.exhausted;
  }

  /** What is left of the budget, ms (0 once spent). */
  remainingMs(): number {
    return Math.max(0, this.deadline - performance.now());
  }

  /** Lets the event loop run when this slice of work has taken `SLICE_MS`. */
  async pace(): Promise<void> {
    if (performance.now() - this.sliceStart < SLICE_MS) return;
    await yieldToLoop();
    this.sliceStart = performance.now();
  }
}
