import { describe, expect, it } from "vitest";
import {
  extractIdentifiers,
  OFFLINE_SUMMARY_LABEL,
  offlineSummarizer,
} from "../../../src/compaction/summarizers/offline.js";
import { isSessiondError } from "../../../src/model/errors.js";

/** Deterministic filler: neutral sentences with varied vocabulary and no cue words. */
function filler(count: number, seed = 7): string[] {
  const nouns = [
    "weather",
    "valley",
    "river",
    "garden",
    "painting",
    "bicycle",
    "kitchen",
    "museum",
    "harbor",
    "forest",
    "bridge",
    "market",
    "concert",
    "library",
    "mountain",
    "village",
    "ocean",
    "station",
    "theater",
    "castle",
  ];
  const verbs = ["looked", "seemed", "appeared", "sounded", "felt", "remained", "became", "stayed"];
  const adjs = [
    "quiet",
    "colourful",
    "pleasant",
    "crowded",
    "distant",
    "bright",
    "peaceful",
    "windy",
    "ancient",
    "modern",
  ];
  let x = seed;
  const next = (n: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % n;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(
      `The ${nouns[next(nouns.length)]} near the ${nouns[next(nouns.length)]} ${verbs[next(verbs.length)]} ${adjs[next(adjs.length)]} and ${adjs[next(adjs.length)]} that ${["morning", "evening", "afternoon"][next(3)]}.`,
    );
  }
  return out;
}

const KEY_SENTENCES = [
  "I prefer answers in British English and always in short bullet lists.",
  "We decided to deploy the gateway on Fly.io instead of Render.",
  "Todo: migrate the billing tables before the deadline on Friday.",
  "Remember that you must never email the customer directly.",
  "Can you also check why the nightly export fails?",
];

function transcriptWith(keys: string[], fillerCount: number): string {
  const lines: string[] = [];
  const noise = filler(fillerCount);
  let k = 0;
  for (let i = 0; i < noise.length; i += 3) {
    const role = (i / 3) % 2 === 0 ? "USER" : "ASSISTANT";
    const parts = noise.slice(i, i + 3);
    if (role === "USER" && k < keys.length && i % 9 === 0) parts.splice(1, 0, keys[k++]!);
    lines.push(`${role}: ${parts.join(" ")}`);
  }
  return lines.join("\n");
}

async function summarize(
  transcript: string,
  maxChars: number,
  identifiers: string[] = [],
  previousSummary?: string,
) {
  const result = await offlineSummarizer().summarize({
    transcript,
    maxChars,
    identifiers,
    ...(previousSummary ? { previousSummary } : {}),
  });
  return result;
}

describe("offlineSummarizer", () => {
  it("is named offline, has no model, and labels its output", async () => {
    const summarizer = offlineSummarizer();
    expect(summarizer.name).toBe("offline");
    expect(summarizer.model).toBeUndefined();
    const result = await summarize("USER: I prefer tea over coffee.\nASSISTANT: Noted, tea it is.", 500);
    expect(result.model).toBeUndefined();
    expect(result.summary.startsWith(OFFLINE_SUMMARY_LABEL)).toBe(true);
    expect(result.summary).toContain("USER: I prefer tea over coffee.");
  });

  it("stays within maxChars on a 100k-character transcript, for every limit, deterministically", async () => {
    const transcript = transcriptWith(KEY_SENTENCES, 1_700);
    expect(transcript.length).toBeGreaterThan(100_000);
    for (const maxChars of [1, 12, 40, 120, 500, 2_000, 16_000]) {
      const { summary } = await summarize(transcript, maxChars);
      expect(summary.length, `maxChars ${maxChars}`).toBeLessThanOrEqual(maxChars);
    }
    const a = await summarize(transcript, 2_000);
    const b = await summarize(transcript, 2_000);
    expect(a.summary).toBe(b.summary);
    expect(a.summary.length).toBeGreaterThan(1_500);
  });

  it("prefers preference, decision, task and pending-ask sentences over filler", async () => {
    const transcript = transcriptWith(KEY_SENTENCES, 600);
    const { summary } = await summarize(transcript, 900);
    for (const sentence of KEY_SENTENCES) expect(summary).toContain(sentence);
  });

  it("keeps sentences in their original order under their role", async () => {
    const transcript = [
      "USER: Hello there.",
      "ASSISTANT: The garden looked pleasant that morning. We decided to use PostgreSQL 16 for the store.",
      "USER: I always want migrations reviewed by Ana. The river seemed quiet.",
    ].join("\n");
    const { summary } = await summarize(transcript, 150);
    const decided = summary.indexOf("ASSISTANT: We decided to use PostgreSQL 16");
    const always = summary.indexOf("USER: I always want migrations reviewed by Ana.");
    expect(decided).toBeGreaterThan(0);
    expect(always).toBeGreaterThan(decided);
    expect(summary).not.toContain("Hello there");
    expect(summary).not.toContain("garden");
  });

  it("keeps every identifier verbatim when they fit, listing those no picked sentence holds", async () => {
    const ids = [
      "https://example.com/runbooks/deploy?env=prod",
      "src/gateway/server.ts",
      "01HZX3K8Q9V7W2M4N6P8R0T2Y4",
      "PROJ-4821",
      "$1,250.00",
      "telegram:884213",
    ];
    const noise = filler(900);
    const lines = noise.map((s, i) => `${i % 2 ? "ASSISTANT" : "USER"}: ${s}`);
    lines[100] = `USER: The runbook is ${ids[0]} and the entry point is ${ids[1]}.`;
    lines[400] = `ASSISTANT: Session ${ids[2]} belongs to ticket ${ids[3]}.`;
    lines[800] = `USER: The invoice came to ${ids[4]} for chat ${ids[5]}.`;
    const notInTranscript = "agent:main:webhook:ci:ts-1712";
    const { summary } = await summarize(lines.join("\n"), 600, [...ids, notInTranscript]);
    expect(summary.length).toBeLessThanOrEqual(600);
    for (const id of [...ids, notInTranscript]) expect(summary).toContain(id);
    expect(summary).toMatch(/\nIdentifiers: .*agent:main:webhook:ci:ts-1712/);
  });

  it("keeps as many identifiers as fit when not all of them can", async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `ORDER-${100_000 + i}`);
    const { summary } = await summarize(transcriptWith([], 300), 120, ids);
    expect(summary.length).toBeLessThanOrEqual(120);
    const kept = ids.filter((id) => summary.includes(id));
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept).toEqual(ids.slice(0, kept.length));
    expect(summary).toContain(` (${20 - kept.length} more identifiers not kept)`);
  });

  it("keeps the further identifiers it is given as room allows, and counts the ones it drops", async () => {
    const required = ["PROJ-1"];
    const more = Array.from({ length: 40 }, (_, i) => `ORDER-${200_000 + i}`);
    const roomy = await offlineSummarizer().summarize({
      transcript: "USER: hi",
      maxChars: 2_000,
      identifiers: [],
    });
    expect(roomy.summary).not.toContain("not kept");
    const { summarizeOffline } = await import("../../../src/compaction/summarizers/offline.js");
    const all = summarizeOffline(
      { transcript: "USER: We ship PROJ-1.", maxChars: 2_000, identifiers: required },
      more,
    );
    for (const id of more) expect(all).toContain(id);
    const tight = summarizeOffline(
      { transcript: "USER: We ship PROJ-1.", maxChars: 300, identifiers: required },
      more,
    );
    expect(tight.length).toBeLessThanOrEqual(300);
    const kept = more.filter((id) => tight.includes(id)).length;
    expect(kept).toBeGreaterThan(0);
    expect(tight).toContain(` (${40 - kept} more identifiers not kept)`);
  });

  it("never nests EARLIER SUMMARY over repeated compactions, and keeps long sentences whole", async () => {
    const long = `The team agreed that ${"the nightly export of the billing tables ".repeat(9)}must finish before six.`;
    expect(long.length).toBeGreaterThan(320);
    let previous: string | undefined;
    for (let round = 0; round < 4; round++) {
      const transcript = [
        ...(previous ? [`EARLIER SUMMARY: ${previous.replace(/\s+/g, " ")}`] : []),
        `USER: Round ${round}: remember my name is Priya.`,
        `ASSISTANT: ${long}`,
      ].join("\n");
      const { summary } = await summarize(transcript, 2_000, [], previous);
      expect(summary).not.toMatch(/EARLIER SUMMARY: (?:EARLIER SUMMARY|USER|ASSISTANT):/);
      expect(summary.split("EARLIER SUMMARY:").length).toBeLessThanOrEqual(2);
      expect(summary.split(OFFLINE_SUMMARY_LABEL)).toHaveLength(2);
      expect(summary).toContain(long);
      previous = summary;
    }
    expect(previous).toContain("Round 0: remember my name is Priya.");
  });

  it("summarises the previous summary with the transcript, without repeating its label", async () => {
    const previous = `${OFFLINE_SUMMARY_LABEL}\nUSER: My name is Priya and I prefer metric units.`;
    const { summary } = await summarize(
      "USER: The bridge looked ancient.\nASSISTANT: It did.",
      400,
      [],
      previous,
    );
    expect(summary).toContain("My name is Priya and I prefer metric units.");
    expect(summary.split(OFFLINE_SUMMARY_LABEL)).toHaveLength(2);
  });

  it("drops pure filler and ranks tool output below the conversation", async () => {
    const transcript = [
      "USER: ok thanks!",
      "TOOL: Exit code 0, wrote 48 files to the output directory in the build folder successfully.",
      "USER: Please remember the release must ship before the audit.",
    ].join("\n");
    const { summary } = await summarize(transcript, 110);
    expect(summary).toContain("remember the release must ship");
    expect(summary).not.toContain("ok thanks");
    expect(summary).not.toContain("TOOL:");
  });

  it("refuses a non-positive limit and honours an aborted signal", async () => {
    await expect(summarize("USER: x", 0)).rejects.toSatisfy((e: unknown) =>
      isSessiondError(e, "INVALID_ARGUMENT"),
    );
    const controller = new AbortController();
    controller.abort();
    await expect(
      offlineSummarizer().summarize({
        transcript: "USER: x",
        maxChars: 100,
        identifiers: [],
        signal: controller.signal,
      }),
    ).rejects.toBeDefined();
  });
});

describe("extractIdentifiers", () => {
  const vectors: Array<[string, string[]]> = [
    ["see https://example.com/a?b=1&c=2.", ["https://example.com/a?b=1&c=2"]],
    [
      "(https://en.wikipedia.org/wiki/Rust_(programming_language))",
      ["https://en.wikipedia.org/wiki/Rust_(programming_language)"],
    ],
    ["[docs](https://x.dev/p?q=a=b) and www.foo.io/x,", ["https://x.dev/p?q=a=b", "www.foo.io/x"]],
    ["mail bob.smith@corp.example.com now", ["bob.smith@corp.example.com"]],
    ["edit /a/b.ts and src/x.ts:42 then ./run", ["/a/b.ts", "src/x.ts:42", "./run"]],
    ["and/or km/h /new TCP/IP", []],
    [
      "01HZX3K8Q9V7W2M4N6P8R0T2Y4 550e8400-e29b-41d4-a716-446655440000",
      ["01HZX3K8Q9V7W2M4N6P8R0T2Y4", "550e8400-e29b-41d4-a716-446655440000"],
    ],
    ["commit 9f86d081884c7d65 but not cafe or deadbeef", ["9f86d081884c7d65"]],
    ["fixes #1234 and sessiond#42 in PROJ-123", ["#1234", "sessiond#42", "PROJ-123"]],
    [
      "2 and 42 but 120, 3.5, $120, 42%, 1,000, 5ms, 10GB, 1st",
      ["120", "3.5", "$120", "42%", "1,000", "5ms", "10GB"],
    ],
    [
      "v1.2.3 telegram:123 agent:main:telegram:dm:99 Note: USER:",
      ["v1.2.3", "telegram:123", "agent:main:telegram:dm:99"],
    ],
    ["id=98765 gpt-4o x86_64 @alice", ["98765", "gpt-4o", "x86_64", "@alice"]],
    ["at 10:30 on 12/03/2025", ["10:30", "12/03/2025"]],
    ["dup 777 then 777 again and (777)", ["777"]],
    ["plain words, no ids at all: e.g. this.", []],
  ];
  it.each(vectors)("%s", (text, expected) => {
    expect(extractIdentifiers(text)).toEqual(expected);
  });

  it("is linear on hostile input", () => {
    const hostile = [
      `${"a".repeat(200_000)}@${"b.".repeat(100_000)}`,
      `${"1".repeat(200_000)}x!`,
      "a-".repeat(200_000),
      "x:".repeat(200_000),
      `https://${"a".repeat(200_000)}`,
      "/a".repeat(200_000),
    ].join(" ");
    extractIdentifiers(hostile);
  });
});
