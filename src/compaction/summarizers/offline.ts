import { SessiondError } from "../../model/errors.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "../../model/summarizer.js";
import { condense, contentTerms } from "./text.js";

/* ------------------------------------------------------------------------------------------------
 * Identifiers
 *
 * Text is cut into whitespace-separated tokens and each token is classified with anchored patterns
 * on a bounded length, so the work is linear in the text whatever it holds.
 * ---------------------------------------------------------------------------------------------- */

const MAX_TOKEN = 512;
const MAX_URL = 2048;

const URL_RE = /^[a-z][a-z0-9+.-]{1,15}:\/\/[^\s/?#]+\S*$/i;
const WWW_RE = /^www\.[a-z0-9-]+(?:\.[a-z0-9-]+)+(?:[/?#]\S*)?$/i;
const EMAIL_RE = /^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ULID_RE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
const HEX_RE = /^(?:0x)?[0-9a-f]{8,}$/i;
const ISSUE_RE = /^(?:[\w.-]+(?:\/[\w.-]+)?)?#\d+$/;
const TICKET_RE = /^[A-Z][A-Z0-9]{1,9}-\d+$/;
const VERSION_RE = /^v\d+(?:\.\d+)+(?:-[0-9A-Za-z.]+)?$/;
const NUMBER_RE = /^([$€£¥]?)[+-]?\d(?:[\d,._:/-]*\d)?(%|[A-Za-z]{1,5})?$/;
const KEY_VALUE_RE = /^[A-Za-z][\w-]{0,31}(?::[\w.@+-]+)+$/;
const DASHED_ID_RE = /^[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+$/;
const LETTERS_DIGITS_RE = /^[A-Za-z]+\d{3,}[A-Za-z0-9]*$/;
const MENTION_RE = /^@[A-Za-z0-9_]{2,}$/;
const EXTENSION_RE = /\.[A-Za-z0-9]{1,8}$/;
const SEGMENT_RE = /^[\w.@+~-]*$/;
const LINE_SUFFIX_RE = /:\d+(?::\d+)?$/;
const ORDINAL_RE = /^(?:st|nd|rd|th)$/i;

const OPENERS = "([{<\"'`*";
const CLOSERS = ".,;:!?)]}>\"'`*";
/** Characters that split a token into candidates (`key=value`, `[text](url)`, `a|b`). */
const SPLITTERS = /[=|<>[\]{}"`]+/;

function countDigits(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

/** Only tokens with a digit, or one of `/ : @ #`, or a `www.` start can be identifiers. */
function mayBeIdentifier(token: string): boolean {
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if ((c >= 48 && c <= 57) || c === 47 || c === 58 || c === 64 || c === 35) return true;
  }
  return token.length > 4 && token.toLowerCase().includes("www.");
}

function isPath(token: string): boolean {
  const path = token.replace(LINE_SUFFIX_RE, "");
  if (!path.includes("/")) return false;
  let rest: string;
  let anchored = false;
  if (path.startsWith("./") || path.startsWith("~/")) {
    rest = path.slice(2);
    anchored = true;
  } else if (path.startsWith("../")) {
    rest = path.slice(3);
    anchored = true;
  } else if (path.startsWith("/")) {
    rest = path.slice(1);
  } else {
    rest = path;
  }
  const segments = rest.split("/");
  if (!segments.every((s) => SEGMENT_RE.test(s))) return false;
  const named = segments.filter((s) => s.length > 0);
  if (named.length === 0 || !/[A-Za-z]/.test(rest)) return false;
  const last = segments[segments.length - 1] ?? "";
  const hasExtension = EXTENSION_RE.test(last) && !/^\.+$/.test(last);
  if (anchored) return true;
  if (path.startsWith("/")) return named.length >= 2 || hasExtension;
  return named.length >= 2 && hasExtension && !segments.some((s) => s.length === 0);
}

function isNumber(token: string): boolean {
  const match = NUMBER_RE.exec(token);
  if (!match) return false;
  const currency = match[1] ?? "";
  const suffix = match[2] ?? "";
  if (suffix && ORDINAL_RE.test(suffix)) return false;
  if (currency || suffix) return true;
  if (countDigits(token) >= 3) return true;
  return /\d\.\d/.test(token);
}

/** Whether a single cleaned token (no whitespace, no wrapping punctuation) is an identifier. */
export function isIdentifier(token: string): boolean {
  if (token.length < 2) return false;
  if (token.includes("://")) return token.length <= MAX_URL && URL_RE.test(token);
  if (token.length > MAX_TOKEN) return false;
  if (token.includes("@")) return EMAIL_RE.test(token) || MENTION_RE.test(token);
  if (WWW_RE.test(token)) return true;
  if (UUID_RE.test(token) || ULID_RE.test(token)) return true;
  if (HEX_RE.test(token) && countDigits(token) > 0) return true;
  if (ISSUE_RE.test(token) || TICKET_RE.test(token) || VERSION_RE.test(token)) return true;
  if (isNumber(token)) return true;
  if (isPath(token)) return true;
  if (KEY_VALUE_RE.test(token)) return true;
  if (countDigits(token) > 0) {
    if (token.length >= 5 && DASHED_ID_RE.test(token)) return true;
    if (token.length >= 6 && LETTERS_DIGITS_RE.test(token)) return true;
  }
  return false;
}

function balanced(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")") depth--;
  }
  return depth >= 0;
}

function stripEdges(token: string, isUrl: boolean): string {
  let start = 0;
  let end = token.length;
  while (start < end && OPENERS.includes(token[start]!)) start++;
  while (end > start && CLOSERS.includes(token[end - 1]!)) {
    // A URL may end in a parenthesis that it opened itself (Wikipedia-style).
    if (isUrl && token[end - 1] === ")" && balanced(token.slice(start, end))) break;
    end--;
  }
  return token.slice(start, end);
}

const SCHEME_RE = /[a-z][a-z0-9+.-]{1,15}:\/\//i;

function splitCandidates(text: string, out: string[]): void {
  if (!SPLITTERS.test(text)) {
    const cleaned = stripEdges(text, false);
    if (cleaned) out.push(cleaned);
    return;
  }
  for (const part of text.split(SPLITTERS)) {
    const cleaned = stripEdges(part, false);
    if (cleaned) out.push(cleaned);
  }
}

function candidates(token: string, out: string[]): void {
  const at = token.includes("://") ? token.search(SCHEME_RE) : -1;
  if (at < 0) {
    splitCandidates(token, out);
    return;
  }
  if (at > 0) splitCandidates(token.slice(0, at), out);
  // A URL runs to the end of the token; quotes, brackets and backticks end it early.
  const url = stripEdges(token.slice(at).split(/["'`<>[\]{}|]/, 1)[0] ?? "", true);
  if (url) out.push(url);
}

/**
 * Exact strings worth keeping verbatim: URLs, file paths, emails, UUIDs/ULIDs/hex ids, `#123` issue
 * refs, `ABC-123` tickets, numbers with 3+ digits or with decimals/units/currency, `key:value` ids,
 * versions and dashed ids with digits. Deduplicated, in first-seen order.
 */
export function extractIdentifiers(text: string): string[] {
  const seen = new Set<string>();
  const found: string[] = [];
  const tokenRe = /\S+/g;
  for (let match = tokenRe.exec(text); match !== null; match = tokenRe.exec(text)) {
    const token = match[0];
    if (token.length < 2 || !mayBeIdentifier(token)) continue;
    found.length = 0;
    candidates(token, found);
    for (const candidate of found) {
      if (!seen.has(candidate) && isIdentifier(candidate)) seen.add(candidate);
    }
  }
  return [...seen];
}

/* ------------------------------------------------------------------------------------------------
 * Extractive summary
 * ---------------------------------------------------------------------------------------------- */

export const OFFLINE_SUMMARY_LABEL = "[Offline extractive summary]";
const IDENTIFIERS_PREFIX = "\nIdentifiers: ";
/** A sentence is kept whole up to this length; longer runs (logs, pastes) are cut into marked pieces. */
const LONG_SENTENCE = 1_000;
const CHUNK = 300;
const ELISION = "…";

const ROLE_RE = /^([A-Z][A-Z_]*(?: [A-Z][A-Z_]*)?(?: \([^)\n]{0,80}\))?|user|assistant|system|tool): /;
const ABBREVIATIONS = new Set(["e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "no", "cf", "approx"]);

/** Words that mark preferences, decisions, commitments, rules and tasks. */
const STRONG_CUE =
  /\b(?:prefer\w*|decid\w*|decision\w*|agreed|must|mustn't|todo|to-do|deadline\w*|due|remember\w*|always|never|don't|do not|avoid|constraint\w*|rules?|requir\w*|important|promis\w*|commit\w*|call me|my name|allerg\w*|favou?rite|budget|blocker|blocked)\b/g;
const WEAK_CUE =
  /\b(?:need(?:s|ed)? to|plan\w*|going to|will|let's|next step\w*|follow[- ]up|pending|task\w*|asap)\b/g;

interface Message {
  role: string;
  isUser: boolean;
  weight: number;
  index: number;
}

interface Sentence {
  message: number;
  /** The source line: sentences of one message from different lines stay on different lines. */
  line: number;
  order: number;
  start: number;
  end: number;
  text: string;
  terms: string[];
  identifiers: number[];
  score: number;
}

function roleWeight(role: string): number {
  const head = role.toUpperCase();
  if (head.startsWith("USER")) return 1.4;
  if (head.startsWith("EARLIER SUMMARY") || head.startsWith("SUMMARY")) return 1.3;
  if (head.startsWith("TOOL")) return 0.35;
  if (head.startsWith("SYSTEM")) return 0.9;
  return 1;
}

function countMatches(re: RegExp, text: string): number {
  re.lastIndex = 0;
  let n = 0;
  while (re.exec(text) !== null) n++;
  return n;
}

/** Sentence ends: `.`, `!`, `?`, `…` followed by whitespace, except after common abbreviations. */
function sentenceRanges(source: string, from: number, to: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = from;
  let i = from;
  while (i < to) {
    const c = source[i]!;
    if (c === "." || c === "!" || c === "?" || c === "…") {
      let j = i + 1;
      while (j < to && ".!?…\"')]".includes(source[j]!)) j++;
      if (j >= to || /\s/.test(source[j]!)) {
        const wordStart = source.lastIndexOf(" ", i) + 1;
        const word = source.slice(Math.max(wordStart, start), i).toLowerCase();
        if (!(c === "." && ABBREVIATIONS.has(word))) {
          out.push([start, j]);
          start = j;
        }
      }
      i = j;
      continue;
    }
    i++;
  }
  if (start < to) out.push([start, to]);
  return out;
}

/**
 * Very long runs without sentence ends (logs, pasted text) are cut at whitespace into chunks; a chunk
 * that is only part of its run is marked with an ellipsis where it was cut, so no piece passes for a
 * whole sentence. Sentences up to LONG_SENTENCE stay whole.
 */
function chunkRange(source: string, start: number, end: number): Array<[number, number, string, string]> {
  if (end - start <= LONG_SENTENCE) return [[start, end, "", ""]];
  const out: Array<[number, number, string, string]> = [];
  let s = start;
  while (end - s > CHUNK) {
    const limit = s + CHUNK;
    const space = source.lastIndexOf(" ", limit);
    const cut = space > s + CHUNK / 2 ? space : limit;
    out.push([s, cut, s === start ? "" : ELISION, ELISION]);
    s = cut;
  }
  out.push([s, end, ELISION, ""]);
  return out;
}

/**
 * An earlier summary as one `EARLIER SUMMARY:` line of its own sentences: without its label, its
 * identifier line (those identifiers are asked for again) or the role prefixes of its lines, so
 * summaries of summaries never nest `EARLIER SUMMARY: EARLIER SUMMARY:`.
 */
function earlierSummaryLine(previous: string): string {
  const parts: string[] = [];
  for (const raw of previous.split("\n")) {
    let line = raw.split(OFFLINE_SUMMARY_LABEL).join(" ").trim();
    if (line.startsWith(IDENTIFIERS_PREFIX.trim()) || DROPPED_NOTE_RE.test(line)) continue;
    for (let role = ROLE_RE.exec(line); role; role = ROLE_RE.exec(line)) line = line.slice(role[0].length);
    if (line) parts.push(line);
  }
  // One line per line of the earlier summary: a line end stays a sentence boundary.
  return `EARLIER SUMMARY: ${parts.map(condense).join("\n")}`;
}

function parse(source: string): { messages: Message[]; sentences: Sentence[] } {
  const messages: Message[] = [];
  const sentences: Sentence[] = [];
  const seenTexts = new Set<string>();
  let lineStart = 0;
  while (lineStart <= source.length) {
    let lineEnd = source.indexOf("\n", lineStart);
    if (lineEnd < 0) lineEnd = source.length;
    const line = source.slice(lineStart, Math.min(lineEnd, lineStart + 120));
    const role = ROLE_RE.exec(line);
    let contentStart = lineStart;
    if (role || messages.length === 0) {
      const name = role?.[1] ?? "TEXT";
      messages.push({
        role: name,
        isUser: name.toUpperCase().startsWith("USER"),
        weight: roleWeight(name),
        index: messages.length,
      });
      if (role) contentStart = lineStart + role[0].length;
    }
    for (const [a, b] of sentenceRanges(source, contentStart, lineEnd)) {
      for (const [s, e, before, after] of chunkRange(source, a, b)) {
        const piece = condense(source.slice(s, e));
        const text = piece ? `${before}${piece}${after}` : "";
        if (!text) continue;
        const key = text.toLowerCase();
        if (seenTexts.has(key)) continue;
        seenTexts.add(key);
        sentences.push({
          message: messages.length - 1,
          line: lineStart,
          order: sentences.length,
          start: s,
          end: e,
          text,
          terms: contentTerms(text),
          identifiers: [],
          score: 0,
        });
      }
    }
    lineStart = lineEnd + 1;
  }
  return { messages, sentences };
}

/** Maps each identifier's occurrences in the source to the sentences holding them. */
function locateIdentifiers(source: string, sentences: Sentence[], identifiers: readonly string[]): void {
  const starts = sentences.map((s) => s.start);
  const find = (position: number): number => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! <= position) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  };
  identifiers.forEach((id, k) => {
    if (!id) return;
    let last = -1;
    for (let p = source.indexOf(id); p >= 0; p = source.indexOf(id, p + id.length)) {
      const at = find(p);
      if (at < 0 || at === last) continue;
      const sentence = sentences[at]!;
      if (sentence.text.includes(id)) {
        sentence.identifiers.push(k);
        last = at;
      }
    }
  });
}

function score(messages: Message[], sentences: Sentence[]): void {
  const df = new Map<string, number>();
  for (const s of sentences) {
    for (const term of new Set(s.terms)) df.set(term, (df.get(term) ?? 0) + 1);
  }
  const n = sentences.length;
  const lastMessage = Math.max(1, messages.length - 1);
  const firstUser = messages.find((m) => m.isUser)?.index ?? -1;
  for (const s of sentences) {
    const unique = new Set(s.terms);
    if (unique.size === 0 && s.identifiers.length === 0) continue;
    let idf = 0;
    for (const term of unique) idf += Math.log(1 + n / (df.get(term) ?? 1));
    let value = (idf + s.identifiers.length) / Math.sqrt(unique.size + 1);
    const lower = s.text.toLowerCase();
    const strong = Math.min(3, countMatches(STRONG_CUE, lower));
    const weak = Math.min(2, countMatches(WEAK_CUE, lower));
    value *= 1 + 0.8 * strong + 0.3 * weak;
    const message = messages[s.message]!;
    if (s.text.endsWith("?")) value *= message.isUser ? 1.6 : 1.1;
    value *= 1 + 0.3 * Math.min(3, s.identifiers.length);
    value *= message.weight;
    value *= 0.8 + 0.4 * (message.index / lastMessage);
    if (message.index === firstUser) value *= 1.25;
    if (unique.size < 2 && strong === 0 && s.identifiers.length === 0) value *= 0.3;
    s.score = value;
  }
}

function identifierLineOf(ids: readonly string[], body: string, maxLength: number, start = ""): string {
  let line = start;
  for (const id of ids) {
    if (!id || body.includes(id) || line.includes(id)) continue;
    const next = line ? `${line}, ${id}` : `${IDENTIFIERS_PREFIX}${id}`;
    if (next.length > maxLength) continue;
    line = next;
  }
  return line;
}

const DROPPED_NOTE_RE = /^\(\d+ more identifiers? not kept\)$/;
const droppedNote = (n: number) => ` (${n} more ${n === 1 ? "identifier" : "identifiers"} not kept)`;

/**
 * The identifiers the body lacks, the required ones first, as many as fit; when some don't, the line says
 * how many it dropped (the selection reserved room for the required ones and that note).
 */
function identifierLine(
  required: readonly string[],
  listed: readonly string[],
  body: string,
  maxLength: number,
): string {
  const missing = (line: string) => listed.filter((id) => !body.includes(id) && !line.includes(id)).length;
  const full = identifierLineOf(listed, body, maxLength);
  if (missing(full) === 0) return full;
  const room = maxLength - droppedNote(listed.length).length;
  const line = identifierLineOf(listed, body, room, identifierLineOf(required, body, room));
  const note = droppedNote(missing(line));
  if (!line) return note.length + 1 <= maxLength ? `\n${note.trim()}` : "";
  return `${line}${note}`;
}

function identifierLineCost(lengths: number[], uncovered: ReadonlySet<number>): number {
  if (uncovered.size === 0) return 0;
  let cost = IDENTIFIERS_PREFIX.length - 2;
  for (const k of uncovered) cost += lengths[k]! + 2;
  return cost;
}

function withoutLabel(text: string): string {
  return text.split(OFFLINE_SUMMARY_LABEL).join(" ".repeat(OFFLINE_SUMMARY_LABEL.length));
}

/**
 * The extractive summary of a request; pure and deterministic. `more` are identifiers worth keeping
 * beyond the required ones (every one of the summarised range): kept in the identifier line as room
 * allows, with a count of those that did not fit.
 */
export function summarizeOffline(request: SummaryRequest, more: readonly string[] = []): string {
  const maxChars = Math.floor(request.maxChars);
  if (!Number.isFinite(maxChars) || maxChars < 1) {
    throw new SessiondError(
      "INVALID_ARGUMENT",
      `maxChars must be a positive number, got ${request.maxChars}`,
    );
  }
  const ids = [...new Set(request.identifiers.filter((id) => id.length > 0))];
  const listed = [...new Set([...ids, ...more.filter((id) => id.length > 0)])];
  const label = OFFLINE_SUMMARY_LABEL.length <= maxChars ? OFFLINE_SUMMARY_LABEL : "";
  const lengths = ids.map((id) => id.length);
  const allIds = new Set(ids.map((_, k) => k));

  if (label.length + identifierLineCost(lengths, allIds) > maxChars) {
    // Not even the identifiers fit: keep as many of them as do, and nothing else.
    const line = identifierLine(ids, listed, "", maxChars - label.length);
    return label ? `${label}${line}` : line.slice(1);
  }

  let transcript = request.transcript;
  if (request.previousSummary) {
    // The compactor's transcript may carry the earlier summary flattened (and cut); read it from the source.
    const rest = transcript.split("\n").filter((line) => !line.startsWith("EARLIER SUMMARY: "));
    transcript = [earlierSummaryLine(request.previousSummary), ...rest].join("\n");
  }
  const source = withoutLabel(transcript);
  const { messages, sentences } = parse(source);
  locateIdentifiers(source, sentences, ids);
  score(messages, sentences);

  const ranked = sentences.filter((s) => s.score > 0).sort((a, b) => b.score - a.score || a.order - b.order);
  const picked: Sentence[] = [];
  const started = new Set<number>();
  const uncovered = new Set(allIds);
  // Room for the note saying how many identifiers did not fit, should any not.
  let used = label.length + (listed.length > 0 ? droppedNote(listed.length).length : 0);
  for (const s of ranked) {
    const role = messages[s.message]!.role;
    const cost = s.text.length + 1 + (started.has(s.message) ? 0 : role.length + 2);
    const remaining = new Set(uncovered);
    for (const k of s.identifiers) remaining.delete(k);
    if (used + cost + identifierLineCost(lengths, remaining) > maxChars) continue;
    picked.push(s);
    started.add(s.message);
    used += cost;
    for (const k of s.identifiers) uncovered.delete(k);
  }

  picked.sort((a, b) => a.order - b.order);
  const lines: string[] = [];
  let current = -1;
  let currentLine = -1;
  for (const s of picked) {
    if (s.message !== current) lines.push(`${messages[s.message]!.role}: ${s.text}`);
    else if (s.line !== currentLine) lines.push(s.text);
    else lines[lines.length - 1] += ` ${s.text}`;
    current = s.message;
    currentLine = s.line;
  }
  const body = lines.length > 0 ? `${label}\n${lines.join("\n")}` : label;
  const summary = body + identifierLine(ids, listed, body, maxChars - body.length);
  return summary.trimStart();
}

/** The name recorded on compaction entries written by the offline summariser. */
export const OFFLINE_SUMMARIZER_NAME = "offline";

/** An extractive summariser that needs no model and no network, in the calling thread. */
export function offlineSummarizer(): Summarizer {
  return {
    name: OFFLINE_SUMMARIZER_NAME,
    async summarize(request: SummaryRequest): Promise<SummaryResult> {
      if (request.signal?.aborted) throw request.signal.reason ?? new Error("aborted");
      return { summary: summarizeOffline(request) };
    },
  };
}
