import { type FSWatcher, watch } from "node:fs";

/** Every file is compared again this often, whatever the events say (the kernel drops events on overflow). */
const RECHECK_MS = 1000;

/**
 * Which session files may have been written by another program since this store last compared them with
 * what it wrote itself. The directory's change events (inotify) name every file written, by anyone; a
 * file with no event since its last comparison, within the last second, needs none. Comparing costs a
 * read per append, about a third of a busy store's time. Events are read by the event loop before a
 * batch runs, so a write another program finished before then is seen; a write made while this store
 * is appending to the same session is simultaneous writing, which nothing serialises either way.
 * Where the watch is unavailable (not Linux, or it failed), every file needs comparing every time.
 */
export class ChangeWatch {
  private readonly unchanged = new Set<string>();
  /** Files named by an event since the last `take`. */
  private changed = new Set<string>();
  /** Whether any file may have changed unseen (the recheck timer, an event without a name) since `take`. */
  private unknown = true;
  private watcher: FSWatcher | undefined;
  private readonly timer: NodeJS.Timeout | undefined;
  /** Files named by an event since the last `takeNamed` (kept for the search index when asked to). */
  private named: Set<string> | undefined;
  private namedUnknown = false;

  constructor(dir: string, keepNamed = false) {
    if (keepNamed) this.named = new Set();
    if (process.platform !== "linux") return;
    try {
      this.watcher = watch(dir, { persistent: false }, (_event, file) => {
        if (typeof file === "string") {
          this.unchanged.delete(file);
          this.changed.add(file);
          this.named?.add(file);
        } else {
          this.forgetAll();
          this.namedUnknown = true;
        }
      });
      this.watcher.on("error", () => this.stopWatching());
    } catch {
      return;
    }
    this.timer = setInterval(() => this.forgetAll(), RECHECK_MS);
    this.timer.unref();
  }

  /** Whether `file` must be compared with what this store wrote before it appends to it. */
  needsCheck(file: string): boolean {
    return !this.unchanged.has(file);
  }

  /** `file` was just compared and matched. */
  checked(file: string): void {
    if (this.watcher) this.unchanged.add(file);
  }

  /**
   * The files events named since the last call, or `all` when any file may have changed unseen (then each
   * is compared the next time it is needed: `needsCheck` says so).
   */
  take(): "all" | ReadonlySet<string> {
    if (this.unknown || !this.watcher) {
      this.unknown = false;
      this.changed = new Set();
      return "all";
    }
    const changed = this.changed;
    if (changed.size > 0) this.changed = new Set();
    return changed;
  }

  /**
   * The files events named since the last call, whatever `take` answered meanwhile, or `all` when any may
   * have changed unseen (no watch, or an event without a name). Only with `keepNamed`.
   */
  takeNamed(): "all" | ReadonlySet<string> {
    const named = this.named;
    if (!named) return "all";
    this.named = new Set();
    if (this.namedUnknown || !this.watcher) {
      this.namedUnknown = false;
      return "all";
    }
    return named;
  }

  close(): void {
    this.stopWatching();
    if (this.timer) clearInterval(this.timer);
  }

  private forgetAll(): void {
    this.unchanged.clear();
    this.unknown = true;
  }

  private stopWatching(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.unchanged.clear();
  }
}
