import { parseEntryInput } from "../src/model/entry-schema.js";
import { redactSecrets } from "../src/secrets/index.js";
import type { Bench, Row } from "./report.js";
import { below, fixed, ratioText } from "./report.js";
import { nowMs, userMessage } from "./support.js";

export interface DetectorResult {
  /** µs per ~500-byte env file or config pasted into a chat (assignments, URLs with passwords). */
  configUs: number;
  /** µs per ~500-byte shell session (curl -u, mysql -p, docker login, --password). */
  shellUs: number;
  /** µs per message to check it and serialise it, which every append does anyway. */
  baselineUs: number;
  /** µs per KB of adversarial text (`://a:` and `password=` repeated, no secret) at 16 KB and at 64 KB. */
  adversarialUsPerKb16: number;
  adversarialUsPerKb64: number;
}

const CONFIG = [
  "DB_HOST=db.internal\nDB_USER=app\nDB_PASS=Zq4mX9rT2vL7wK\nREDIS_URL=redis://:hunter2pw@cache:6379/0\n",
  "SECRET_KEY = 'django-insecure-9f8e7d'\nDATABASE_URL=postgres://u:p@ss/w0rd@h:5432/d\n",
  'production:\n  secret_key_base: 3f2a9b0c1d4e5f60718293a4\n  api_token = "abc123"\n',
  '{"auths": {"ghcr.io": {"auth": "Ym9iOnMzY3JldHBhc3N3b3Jk"}}, "region": "eu-west-1"}\n',
].join("");
const SHELL = [
  "$ curl -u admin:S3cretPw https://api.example.com/v1/items | jq .\n",
  "$ mysql -u root -pS3cretPw production < dump.sql\n",
  "$ docker login -u bob -p S3cretPw registry.example.com\n",
  "$ mongosh --username root --password S3cretPw --host db\n",
  "$ git clone https://bob:S3cretPw@github.com/acme/app.git && cd app && npm ci\n",
].join("");

function perCallUs(texts: readonly string[], rounds: number, work: (text: string) => unknown): number {
  for (const text of texts) work(text);
  const start = nowMs();
  for (let r = 0; r < rounds; r++) for (const text of texts) work(text);
  return ((nowMs() - start) * 1000) / (rounds * texts.length);
}

/** Distinct copies (a number changes) so no engine cache makes repeats free. */
function variants(text: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => text.replace(/Pw|pw/g, (m) => `${m}${i}`));
}

function adversarial(kb: number): string {
  const unit = "see x://a:b c://d: password=password= curl -u -u mysql -p -- --token ";
  return unit.repeat(Math.ceil((kb * 1024) / unit.length)).slice(0, kb * 1024);
}

/** The secret detector's cost on the text it is now told to look at (config, shell), and that it stays linear. */
export const detectorCost: Bench<DetectorResult> = {
  name: "secret detector on config and shell text",
  async run(ctx) {
    const rounds = ctx.quick ? 20 : 100;
    const config = variants(CONFIG, 50);
    const shell = variants(SHELL, 50);
    const baselineUs = perCallUs(config, rounds, (text) =>
      JSON.stringify(parseEntryInput(userMessage(text))),
    );
    const configUs = perCallUs(config, rounds, redactSecrets);
    const shellUs = perCallUs(shell, rounds, redactSecrets);
    const big16 = [adversarial(16)];
    const big64 = [adversarial(64)];
    const adversarialUsPerKb16 = perCallUs(big16, ctx.quick ? 3 : 10, redactSecrets) / 16;
    const adversarialUsPerKb64 = perCallUs(big64, ctx.quick ? 3 : 10, redactSecrets) / 64;
    ctx.log(`detector: ${fixed(configUs, 1)} us config, ${fixed(shellUs, 1)} us shell`);
    return { configUs, shellUs, baselineUs, adversarialUsPerKb16, adversarialUsPerKb64 };
  },
  rows(r): Row[] {
    const base = `${fixed(r.baselineUs, 1)} us (check + serialise)`;
    const growth = r.adversarialUsPerKb64 / r.adversarialUsPerKb16;
    return [
      {
        figure: "scrub a ~500-byte env file / config",
        value: `${fixed(r.configUs, 1)} us`,
        baseline: base,
        ratio: ratioText(r.configUs / r.baselineUs),
        checks: [],
      },
      {
        figure: "scrub a ~500-byte shell session",
        value: `${fixed(r.shellUs, 1)} us`,
        baseline: base,
        ratio: ratioText(r.shellUs / r.baselineUs),
        checks: [],
      },
      {
        figure: "adversarial text, cost per KB at 64 KB vs 16 KB",
        value: `${fixed(r.adversarialUsPerKb64, 1)} us/KB`,
        baseline: `${fixed(r.adversarialUsPerKb16, 1)} us/KB at 16 KB`,
        ratio: ratioText(growth),
        // Linear: the cost per KB must not grow with the text (quadratic would make it 4x).
        checks: [below(growth, 2, "2x (linear)")],
      },
    ];
  },
};
