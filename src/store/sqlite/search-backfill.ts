import type { IndexProgress } from "../../search/sqlite/search-index.js";

/** Sessions indexed per step of the background build: one short transaction between the writer's commits. */
const SESSIONS_PER_STEP = 200;

/**
 * Builds the search index of a database upgraded from before search, in the background: a step at a time
 * on the writer (so appends keep going), each committing how far it got (a restart resumes there). A step
 * that fails (another process holds the write lock) is tried again a second later.
 */
export class SearchBackfill {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    indexing: boolean,
    private readonly step: (sessions: number) => IndexProgress | Promise<IndexProgress>,
    private readonly onProgress: ((progress: IndexProgress) => void) | undefined,
  ) {
    if (indexing) this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.run(), ms);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    let progress: IndexProgress;
    try {
      progress = await this.step(SESSIONS_PER_STEP);
    } catch {
      this.schedule(1000);
      return;
    }
    if (this.stopped) return;
    this.onProgress?.(progress);
    if (progress.indexing) this.schedule(0);
  }
}
