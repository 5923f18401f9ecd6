import { CONTEXT_MAKERS } from "./secret-corpus-contexts.js";
import {
  ALNUM,
  B64,
  B64URL,
  b64,
  DIGITS,
  HEX,
  inText,
  jwt,
  LETTERS,
  type Make,
  onePasswordToken,
  pem,
  rand,
  UPPER_DIGITS,
} from "./secret-corpus-gen.js";
import { SERVICE_MAKERS } from "./secret-corpus-services.js";

/**
 * Credential shapes for the redaction tests: each generated here from a seeded generator, in its service's
 * real format, so none is a real key. `secret` is what must vanish; `text` is how it turns up.
 */
export interface SecretSample {
  name: string;
  secret: string;
  text: string;
  /** Told only by what surrounds it (`password=`, `Basic `, `private_key_id`): alone it is a plain word or a hash. */
  contextual: boolean;
}

const CONTEXTUAL = new Set([
  "GCP private_key_id",
  "Basic auth header",
  "Basic credentials in text",
  "URL password",
  "MongoDB SRV password",
  "password assignment",
]);

const MAKERS: Make[] = [
  ["OpenAI project key", `sk-proj-${rand(B64URL, 74)}T3BlbkFJ${rand(B64URL, 74)}`, inText],
  ["OpenAI legacy key", `sk-${rand(ALNUM, 20)}T3BlbkFJ${rand(ALNUM, 20)}`, inText],
  ["Anthropic key", `sk-ant-api03-${rand(B64URL, 93)}AA`, (s) => `ANTHROPIC_API_KEY is ${s}`],
  ["Stripe live secret key", `sk_live_${rand(ALNUM, 24)}`, inText],
  ["Stripe restricted key", `rk_test_${rand(ALNUM, 24)}`, inText],
  ["Stripe webhook secret", `whsec_${rand(ALNUM, 32)}`, inText],
  ["GitHub classic token", `ghp_${rand(ALNUM, 36)}`, (s) => `git clone with ${s} please`],
  ["GitHub OAuth token", `gho_${rand(ALNUM, 36)}`, inText],
  ["GitHub fine-grained token", `github_pat_${rand(ALNUM, 22)}_${rand(ALNUM, 59)}`, inText],
  ["GitLab token", `glpat-${rand(B64URL, 20)}`, inText],
  ["Slack bot token", `xoxb-${rand(DIGITS, 11)}-${rand(DIGITS, 12)}-${rand(ALNUM, 24)}`, inText],
  ["Slack app token", `xapp-1-A${rand(UPPER_DIGITS, 10)}-${rand(DIGITS, 13)}-${rand(HEX, 64)}`, inText],
  [
    "Slack incoming webhook",
    `https://hooks.slack.com/services/T${rand(UPPER_DIGITS, 8)}/B${rand(UPPER_DIGITS, 10)}/${rand(ALNUM, 24)}`,
    (s) => `post alerts to ${s} please`,
  ],
  [
    "Discord webhook",
    `https://discord.com/api/webhooks/${rand(DIGITS, 18)}/${rand(B64URL, 68)}`,
    (s) => `hook: ${s}`,
  ],
  ["Discord bot token", `MT${rand(ALNUM, 24)}.${rand(B64URL, 6)}.${rand(B64URL, 38)}`, (s) => `bot ${s}`],
  ["Telegram bot token", `${rand(DIGITS, 10)}:AA${rand(B64URL, 33)}`, (s) => `the bot token ${s}`],
  ["AWS access key id", `AKIA${rand(UPPER_DIGITS, 16)}`, inText],
  ["AWS secret key, assigned", rand(B64, 40), (s) => `aws_secret_access_key = ${s}`],
  ["AWS secret key, bare", rand(B64, 40), (s) => `and the other half is ${s} ok`],
  ["Google API key", `AIza${rand(B64URL, 35)}`, inText],
  ["GCP private_key_id", rand(HEX, 40), (s) => `{"type": "service_account", "private_key_id": "${s}"}`],
  [
    "GCP service-account private key",
    pem("PRIVATE KEY"),
    (s) => `"private_key": "${s.replace(/\n/g, "\\n")}"`,
  ],
  ["Google OAuth access token", `ya29.${rand(B64URL, 120)}`, inText],
  ["JWT", jwt(), (s) => `session jwt ${s}`],
  ["npm token", `npm_${rand(ALNUM, 36)}`, (s) => `//registry.npmjs.org/:_authToken=${s}`],
  ["npm token, bare", `npm_${rand(ALNUM, 36)}`, inText],
  ["Hugging Face token", `hf_${rand(LETTERS, 34)}`, inText],
  ["SendGrid key", `SG.${rand(B64URL, 22)}.${rand(B64URL, 43)}`, inText],
  ["Twilio API key", `SK${rand(HEX, 32)}`, inText],
  [
    "Azure storage account key",
    `${rand(B64, 86)}==`,
    (s) => `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${s};EndpointSuffix=core.windows.net`,
  ],
  [
    "Azure Service Bus key",
    `${rand(B64, 43)}=`,
    (s) => `Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=${s}`,
  ],
  [
    "Azure SAS signature",
    `${rand(ALNUM, 40)}%3D`,
    (s) => `https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2026-12-31&sig=${s}&sp=r`,
  ],
  ["Basic auth header", b64(`deploy:${rand(ALNUM, 14)}`), (s) => `Authorization: Basic ${s}`],
  ["Basic credentials in text", b64(`admin:${rand(ALNUM, 12)}`), (s) => `curl -H "X-Auth: Basic ${s}" api`],
  ["Bearer token", rand(B64URL, 40), (s) => `call it with Bearer ${s}`],
  ["URL password", rand(ALNUM, 16), (s) => `postgres://app:${s}@db.internal:5432/app`],
  ["MongoDB SRV password", rand(ALNUM, 18), (s) => `mongodb+srv://root:${s}@cluster0.mongodb.net/db`],
  ["password assignment", rand(ALNUM, 12), (s) => `login with user=bob password=${s} now`],
  ["client_secret in JSON", rand(B64URL, 32), (s) => `{"client_id": "web", "client_secret": "${s}"}`],
  ["Mailgun key", `key-${rand(HEX, 32)}`, inText],
  ["Mailchimp key", `${rand(HEX, 32)}-us6`, inText],
  ["Shopify token", `shpat_${rand(HEX, 32)}`, inText],
  ["Square token", `sq0atp-${rand(B64URL, 22)}`, inText],
  ["PyPI token", `pypi-AgEIcHlwaS5vcmc${rand(B64URL, 70)}`, inText],
  ["DigitalOcean token", `dop_v1_${rand(HEX, 64)}`, inText],
  ["Databricks token", `dapi${rand(HEX, 32)}`, inText],
  ["Vault token", `hvs.${rand(B64URL, 90)}`, inText],
  ["Linear key", `lin_api_${rand(ALNUM, 40)}`, inText],
  ["Notion token", `ntn_${rand(DIGITS, 11)}${rand(ALNUM, 35)}`, inText],
  ["Figma token", `figd_${rand(B64URL, 40)}`, inText],
  ["Vercel token", `vcp_${rand(ALNUM, 24)}`, inText],
  ["Cloudflare token", `cfut_${rand(ALNUM, 40)}${rand(HEX, 8)}`, inText],
  ["Tailscale key", `tskey-auth-${rand(ALNUM, 12)}-${rand(ALNUM, 30)}`, inText],
  ["1Password service token", onePasswordToken(), inText],
  ["Groq key", `gsk_${rand(ALNUM, 52)}`, inText],
  ["Docker token", `dckr_pat_${rand(B64URL, 27)}`, inText],
  ["Grafana service-account token", `glsa_${rand(ALNUM, 32)}_${rand(HEX, 8)}`, inText],
  ["age secret key", `AGE-SECRET-KEY-1${rand(UPPER_DIGITS, 58)}`, inText],
  ["Cookie header", rand(B64URL, 32), (s) => `Cookie: session=${s}; theme=dark`],
  ["random token", rand(ALNUM, 48), (s) => `the key is ${s} (keep it)`],
  ["RSA private key", pem("RSA PRIVATE KEY"), (s) => `key file:\n${s}\nend`],
  ["OpenSSH private key", pem("OPENSSH PRIVATE KEY"), (s) => s],
];

export const SECRET_CORPUS: readonly SecretSample[] = [...MAKERS, ...CONTEXT_MAKERS, ...SERVICE_MAKERS].map(
  ([name, secret, wrap]) => ({
    name,
    secret,
    text: wrap(secret),
    contextual: CONTEXTUAL.has(name) || CONTEXT_MAKERS.some(([n]) => n === name),
  }),
);

/**
 * The pieces of a secret that give it away: itself, and its 12-character runs. Shorter runs of random
 * text turn up by chance in binary files; 12 never do.
 */
export function telltales(secret: string): string[] {
  const pieces = new Set([secret]);
  for (let i = 0; i + 12 <= secret.length; i += 6) pieces.add(secret.slice(i, i + 12));
  return [...pieces].filter((p) => !p.includes("\n") && !p.startsWith("-----") && !/^[A-Z -]+$/.test(p));
}
