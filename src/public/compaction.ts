/** `sessiond/compaction`: the compactor, its policy and the summarisers. */
export { type CompactionOutcome, Compactor } from "../compaction/compactor.js";
export { type CompactionPolicy, DEFAULT_COMPACTION } from "../compaction/policy.js";
export { modelSummarizer } from "../compaction/summarizers/model.js";
export { extractIdentifiers, offlineSummarizer } from "../compaction/summarizers/offline.js";
