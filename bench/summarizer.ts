import { requiredIdentifiers } from "../src/compaction/identifiers.js";
import { DEFAULT_COMPACTION } from "../src/compaction/policy.js";
import { extractIdentifiers, offlineSummarizer } from "../src/compaction/summarizers/offline.js";
import type { Bench, BenchContext, Row } from "./report.js";
import { fixed, int, ratioText } from "./report.js";
import { mean, nowMs, percentile, random } from "./support.js";

export interface SummarizerResult {
  transcripts: number;
  transcriptChars: number;
  summaries: number;
  summariesPerSec: number;
  mbPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  meanSummaryChars: number;
  meanIdentifiers: number;
  /** Baselines over the same transcripts, the same number of passes. */
  extractMbPerSec: number;
  splitMbPerSec: number;
}

const SOURCE_CHARS = DEFAULT_COMPACTION.sourceMaxChars;
const MAX_CHARS = DEFAULT_COMPACTION.summaryMaxChars;
const MB = 1_000_000;

const FILLER = (
  "we looked at the logs again and the retry loop seems to hide the real error so the next step is to " +
  "reproduce it locally with the same config and compare the timings before and after the change while " +
  "the customer waits for an answer about the refund and the release notes still need a review"
).split(" ");

type Pick = <T>(items: readonly T[]) => T;

/** Sentences of the kind agents see: tickets, URLs, paths, money, versions, emails, preferences. */
const TEMPLATES: ReadonlyArray<(n: () => number, pick: Pick) => string> = [
  (n) => `Can you check ticket OPS-${n()} before the Friday deadline?`,
  (n) =>
    `The build at https://ci.example.com/builds/${n()}?tab=logs failed on src/store/sqlite/rows.ts:${n() % 400}.`,
  (n) =>
    `I prefer the smaller plan, the budget is $${1 + (n() % 9)},${String(n() % 1000).padStart(3, "0")} per month.`,
  (n) => `Deployed v2.${n() % 30}.${n() % 10} to staging and p99 latency dropped ${n() % 90}.5% overnight.`,
  (n, pick) => `Please email ${pick(["ana", "li", "sam", "omar"])}@example.org about invoice INV-${n()}.`,
  (n) => `See #${n()} and commit ${(n() * 2654435761).toString(16).padStart(8, "0")} for the fix.`,
  (n) => `We decided to keep the cache at ${n()} MB and never restart during business hours.`,
  (n) =>
    `Remember that my flight UA${n()} leaves at 07:${String(n() % 60).padStart(2, "0")} from gate B${n() % 40}.`,
  () => "Sounds good, thanks!",
  (n) => `The tool returned ${n()} rows from orders_2024 with status=pending.`,
];

/** A `ROLE: content` transcript of about `chars` characters, cut as buildTranscript cuts it. */
function transcript(seed: number, chars: number): string {
  const next = random(seed);
  const n = () => 100 + Math.floor(next() * 9_900);
  const pick: Pick = (items) => items[Math.floor(next() * items.length)]!;
  const lines: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const role = i % 2 === 0 ? "USER (Ana)" : next() < 0.15 ? "TOOL" : "ASSISTANT";
    const sentences: string[] = [];
    const count = role === "ASSISTANT" ? 3 + Math.floor(next() * 4) : 1 + Math.floor(next() * 3);
    for (let s = 0; s < count; s++) {
      if (next() < 0.5) sentences.push(pick(TEMPLATES)(n, pick));
      else {
        // A run of the filler text: plain prose without identifiers.
        const start = Math.floor(next() * (FILLER.length - 22));
        const words = FILLER.slice(start, start + 8 + Math.floor(next() * 14));
        sentences.push(`${words.join(" ")}.`.replace(/^./, (c) => c.toUpperCase()));
      }
    }
    const line = `${role}: ${sentences.join(" ")}`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join("\n").slice(0, chars);
}

function mbPerSec(chars: number, ms: number): number {
  return chars / MB / (ms / 1000);
}

async function run(ctx: BenchContext): Promise<SummarizerResult> {
  const count = 64;
  const passes = ctx.quick ? 5 : 30;
  const texts = Array.from({ length: count }, (_, i) => transcript(1_000 + i, SOURCE_CHARS));
  // As the compactor does: the identifiers a summary must keep, chosen from extractIdentifiers' list.
  const ids = texts.map((text) => requiredIdentifiers(text, DEFAULT_COMPACTION.maxIdentifiers, MAX_CHARS));
  const chars = texts.reduce((sum, t) => sum + t.length, 0);
  const summarizer = offlineSummarizer();
  ctx.log(`summarizer: ${count} transcripts of ${int(SOURCE_CHARS)} chars, ${passes} passes`);

  const summarizeAll = async (latencies?: number[]) => {
    const lengths: number[] = [];
    for (let i = 0; i < count; i++) {
      const identifiers = ids[i] ?? [];
      const t0 = nowMs();
      const { summary } = await summarizer.summarize({
        transcript: texts[i] ?? "",
        maxChars: MAX_CHARS,
        identifiers,
      });
      latencies?.push(nowMs() - t0);
      if (summary.length > MAX_CHARS || identifiers.some((id) => !summary.includes(id))) {
        throw new Error(`summarizer: summary ${i} is too long or dropped an identifier`);
      }
      lengths.push(summary.length);
    }
    return lengths;
  };
  let sink = 0;
  const extractAll = () => {
    for (const text of texts) sink += extractIdentifiers(text).length;
  };
  const splitAll = () => {
    for (const text of texts) sink += text.split(/(?<=[.!?])\s+/).length;
  };

  // Warm-up, then the same passes of each, alternating so that all three see the same machine state.
  await summarizeAll();
  extractAll();
  splitAll();
  const latencies: number[] = [];
  let lengths: number[] = [];
  let summaryMs = 0;
  let extractMs = 0;
  let splitMs = 0;
  for (let p = 0; p < passes; p++) {
    let t0 = nowMs();
    lengths = await summarizeAll(latencies);
    summaryMs += nowMs() - t0;
    t0 = nowMs();
    extractAll();
    extractMs += nowMs() - t0;
    t0 = nowMs();
    splitAll();
    splitMs += nowMs() - t0;
  }
  if (sink === 0) throw new Error("summarizer: the baselines found nothing");
  latencies.sort((a, b) => a - b);
  const total = chars * passes;
  const result: SummarizerResult = {
    transcripts: count,
    transcriptChars: chars / count,
    summaries: count * passes,
    summariesPerSec: (count * passes) / (summaryMs / 1000),
    mbPerSec: mbPerSec(total, summaryMs),
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    meanSummaryChars: mean(lengths),
    meanIdentifiers: mean(ids.map((list) => list.length)),
    extractMbPerSec: mbPerSec(total, extractMs),
    splitMbPerSec: mbPerSec(total, splitMs),
  };
  ctx.log(`summarizer: ${int(result.summariesPerSec)} summaries/s, ${fixed(result.mbPerSec, 2)} MB/s`);
  return result;
}

export const summarizerThroughput: Bench<SummarizerResult> = {
  name: `offline summariser (${int(SOURCE_CHARS)}-char transcripts -> <= ${int(MAX_CHARS)} chars)`,
  run,
  rows(r): Row[] {
    return [
      {
        figure: "summaries/s",
        value: int(r.summariesPerSec),
        baseline: "",
        ratio: "",
        checks: [],
      },
      {
        figure: "transcript MB/s (baseline: extractIdentifiers)",
        value: fixed(r.mbPerSec, 2),
        baseline: fixed(r.extractMbPerSec, 2),
        ratio: ratioText(r.mbPerSec / r.extractMbPerSec),
        checks: [],
      },
      {
        figure: "  baseline: text.split(/(?<=[.!?])\\s+/)",
        value: "",
        baseline: fixed(r.splitMbPerSec, 2),
        ratio: ratioText(r.mbPerSec / r.splitMbPerSec),
        checks: [],
      },
      {
        figure: "latency per summary p50 / p99 (ms)",
        value: `${fixed(r.latencyP50Ms, 2)} / ${fixed(r.latencyP99Ms, 2)}`,
        baseline: "",
        ratio: "",
        checks: [],
      },
      {
        figure: "summary chars / required identifiers (mean)",
        value: `${int(r.meanSummaryChars)} / ${fixed(r.meanIdentifiers, 1)}`,
        baseline: "",
        ratio: "",
        checks: [],
      },
    ];
  },
};
