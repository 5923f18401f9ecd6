/** Small text helpers shared by the offline summariser and offline titles. */

/** English function words and chat filler: they say nothing about what a conversation is about. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all also am an and any are aren't as at be because been before " +
    "being below between both but by can can't cannot could couldn't did didn't do does doesn't doing " +
    "don't down during each else even ever few for from further get gets getting got had hadn't has " +
    "hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how " +
    "how's however i i'd i'll i'm i've if in into is isn't it it's its itself just let let's like lot " +
    "lots may maybe me might more most much mustn't my myself no nor not now of off on once one only or " +
    "other ought our ours ourselves out over own please quite rather really same say says shall shan't " +
    "she she'd she'll she's should shouldn't so some something such than that that's the their theirs " +
    "them themselves then there there's these they they'd they'll they're they've thing things this " +
    "those though through to too under until up upon us very want wants was wasn't way we we'd we'll " +
    "we're we've well were weren't what what's when when's where where's whether which while who who's " +
    "whom why why's will with within without won't would wouldn't yes yet you you'd you'll you're " +
    "you've your yours yourself yourselves " +
    "hi hello hey thanks thank thx ok okay sure great cool nice awesome yeah yep nope hmm oh ah alright " +
    "sounds good perfect fine right help tell know think see let's go going make made use using need"
  ).split(" "),
);

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;

/** Lower-cased words that carry content: no stop words, no single letters. */
export function contentTerms(text: string): string[] {
  const out: string[] = [];
  for (const match of text.toLowerCase().matchAll(WORD)) {
    const word = match[0].replace(/’/g, "'").replace(/['_-]+$/, "");
    if (word.length < 2 || STOP_WORDS.has(word)) continue;
    out.push(word);
  }
  return out;
}

/** Collapses runs of whitespace to one space and trims. */
export function condense(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
