import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type ChatRequestBody,
  type ChatResponse,
  type OpenAiServer,
  startOpenAiServer,
} from "./openai-server.js";

/** The newest user message the model was asked about (unanswered ones before it are merged into one). */
export function lastUser(body: ChatRequestBody): string {
  const last = [...body.messages].reverse().find((m) => m.role === "user");
  return String(last?.content).split("\n\n").at(-1) as string;
}

export interface HeldModel {
  server: OpenAiServer;
  /** What each request asked about (`lastUser`), in order. */
  asked: string[];
  /** Resolves once the first request arrived. */
  firstAsked: Promise<void>;
  /** Answers every held request with `reply`. */
  release(reply: ChatResponse): void;
  /** From now on, answers at once with `echo: <input>`. */
  answerAtOnce(): void;
  /** Fails what is still held and closes the server. */
  close(): Promise<void>;
}

/** An OpenAI-protocol model that holds every reply until told: a turn that stays running. */
export async function startHeldModel(): Promise<HeldModel> {
  const asked: string[] = [];
  const held: Array<(reply: ChatResponse) => void> = [];
  let firstArrived!: () => void;
  const firstAsked = new Promise<void>((r) => {
    firstArrived = r;
  });
  const server = await startOpenAiServer((body) => {
    asked.push(lastUser(body));
    firstArrived();
    return new Promise<ChatResponse>((r) => held.push(r));
  });
  const release = (reply: ChatResponse) => {
    for (const answer of held.splice(0)) answer(reply);
  };
  return {
    server,
    asked,
    firstAsked,
    release,
    answerAtOnce: () =>
      server.setHandler((body) => {
        asked.push(lastUser(body));
        return { content: `echo: ${lastUser(body)}` };
      }),
    close: async () => {
      release({ status: 500 });
      await server.close();
    },
  };
}

/** A sessiond.yaml in `dir` whose one agent, main, asks `model` (no debounce, no titles). */
export function writeModelConfig(dir: string, model: OpenAiServer): void {
  writeFileSync(
    join(dir, "sessiond.yaml"),
    [
      `models: { local: { provider: openai, base_url: "${model.baseUrl}", model: test-model } }`,
      "agents: [{ id: main, model: local, queue: { debounce_ms: 0 } }]",
      "titles: { enabled: false }",
      "",
    ].join("\n"),
  );
}
