import type { Tracked } from "./directory-scan.js";
import type { FileSystem } from "./durable-fs.js";
import { parseStem, sessionFileName, stemOf } from "./file-names.js";
import type { FileWrites } from "./file-writes.js";
import type { SessionFiles } from "./session-files.js";

/** A titled session's file is renamed as CrabTalk names it (`{prefix}_{seq}_{title_slug}.jsonl`). */
export class TitleRewrite {
  constructor(
    readonly dir: string,
    readonly files: SessionFiles,
    private readonly writes: FileWrites,
    readonly fs: FileSystem,
  ) {}

  /** Nothing to finish from an earlier process. */
  recover(): void {}

  /** The session's title changed in this batch. */
  titled(tracked: Tracked): void {
    const stem = parseStem(stemOf(tracked.file));
    if (stem)
      this.writes.pending.renames.push({
        tracked,
        to: sessionFileName(stem.prefix, stem.seq, tracked.session.title),
      });
  }

  rewriteDue(): void {}

  forget(_tracked: Tracked): void {}

  rollBack(): void {}
}
