/** What a summariser is asked: a transcript already cut to the source limit. */
export interface SummaryRequest {
  /** `ROLE: content` lines, oldest first. */
  transcript: string;
  /** The summary must not be longer than this many characters. */
  maxChars: number;
  /** Exact strings (ids, URLs, paths, numbers) from the transcript that the summary must keep verbatim. */
  identifiers: string[];
  /** The summary this one replaces, if any: it is part of what is summarised. */
  previousSummary?: string;
  signal?: AbortSignal;
}

export interface SummaryResult {
  summary: string;
  /** The model that wrote it; absent for the offline summariser. */
  model?: string;
}

/** Where the identifiers a summary must keep are found: the text summarised, and how many at most. */
export interface IdentifierSource {
  text: string;
  max: number;
}

export interface Summarizer {
  /** `offline`, `openai`, `anthropic`: recorded on the compaction entry. */
  readonly name: string;
  readonly model?: string;
  summarize(request: SummaryRequest): Promise<SummaryResult>;
  /**
   * Finds the identifiers and writes the summary that keeps them in one step, where that saves a hand-off
   * (the offline summariser on the compaction thread); the compactor otherwise finds them itself first.
   */
  summarizeKeeping?(
    request: Omit<SummaryRequest, "identifiers">,
    source: IdentifierSource,
  ): Promise<SummaryResult & { identifiers: string[] }>;
}
