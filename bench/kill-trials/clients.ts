/** The gateway the clients talk to, across kills: each restart is a new life with its own URL. */
export class GatewayLives {
  private current: { url: string; life: number } | undefined;
  private life = 0;
  private waiters: Array<() => void> = [];
  stopped = false;

  open(url: string): void {
    this.current = { url, life: ++this.life };
    this.wake();
  }

  close(): void {
    this.current = undefined;
  }

  /** The clients finish the request they are in and send no more. */
  stop(): void {
    this.stopped = true;
    this.wake();
  }

  /** The gateway of a life after `after` (the one whose request failed), once it listens. */
  async next(after: number): Promise<{ url: string; life: number } | undefined> {
    while (!this.stopped && (!this.current || this.current.life <= after)) {
      await new Promise<void>((r) => this.waiters.push(r));
    }
    return this.stopped ? undefined : this.current;
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}

export type Driver = "chat" | "async" | "openai";

/** One input a client sent: its text is unique across the trials, so the store can be checked by it. */
export interface SentInput {
  driver: Driver;
  /** The client that sent it (`c0`, `o1`, …). */
  client: string;
  /** The gateway's life it was sent to (1 for the first). */
  life: number;
  text: string;
  /** The gateway answered it (200 with the turn's reply), or admitted it (202, `async`). */
  acked: boolean;
  /** The HTTP status, or `error` when the connection failed (the gateway was killed). */
  status: number | "error";
}

export interface ClientOptions {
  token: string;
  lives: GatewayLives;
  sent: SentInput[];
}

const REQUEST_TIMEOUT_MS = 60_000;

/** A client of `POST /api/chat` on its own session, one input at a time. */
export async function chatClient(index: number, options: ClientOptions): Promise<void> {
  await clientLoop(options, "chat", `c${index}`, async (url, text) => {
    const response = await post(`${url}/api/chat`, options.token, {
      message: text,
      session_id: `admin-kill-c${index}`,
    });
    const body = (await response.json()) as { reply?: unknown };
    return { status: response.status, reply: typeof body.reply === "string" ? body.reply : undefined };
  });
}

/**
 * A client of `POST /api/chat?async=1` on its own session: an input counts as acknowledged once admitted
 * (202), and the client waits for its turn to end (`GET /api/turns/:id`) before it sends the next one.
 */
export async function asyncClient(index: number, options: ClientOptions): Promise<void> {
  await clientLoop(options, "async", `a${index}`, async (url, text) => {
    const response = await post(`${url}/api/chat?async=1`, options.token, {
      message: text,
      session_id: `admin-kill-a${index}`,
    });
    const body = (await response.json()) as { id?: unknown };
    if (response.status !== 202 || typeof body.id !== "string")
      return { status: response.status, reply: undefined };
    const turn = `${url}/api/turns/${encodeURIComponent(body.id)}`;
    for (;;) {
      const status = await fetch(turn, {
        headers: { authorization: `Bearer ${options.token}` },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      }).then(
        (r) => r.json() as Promise<{ state?: unknown }>,
        () => undefined,
      );
      // A gateway killed meanwhile: the admission stands, the turn's outcome is the store's to show.
      if (!status || (status.state !== "queued" && status.state !== "running")) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    return { status: 200, reply: `echo: ${text}` };
  });
}

/**
 * A client of `POST /v1/chat/completions` that sends its whole conversation each time, continuing what the
 * gateway answered (an input that got no answer is not in it). With `named` it names its session (`user`),
 * else it shares the key of its address (`openai-compat:127.0.0.1`) with the other unnamed clients; with
 * `stream` it reads the reply as server-sent events.
 */
export async function openAiClient(
  index: number,
  mode: { named: boolean; stream: boolean },
  options: ClientOptions,
): Promise<void> {
  const history: Array<{ role: "user" | "assistant"; content: string }> = [];
  await clientLoop(options, "openai", `o${index}`, async (url, text) => {
    const response = await post(`${url}/v1/chat/completions`, options.token, {
      model: "main",
      messages: [...history, { role: "user", content: text }],
      ...(mode.named ? { user: `kill-o${index}` } : {}),
      ...(mode.stream ? { stream: true } : {}),
    });
    const reply = mode.stream ? streamedReply(await response.text()) : wholeReply(await response.json());
    if (response.status === 200 && reply !== undefined) {
      history.push({ role: "user", content: text }, { role: "assistant", content: reply });
    }
    return { status: response.status, reply };
  });
}

function wholeReply(body: unknown): string | undefined {
  const content = (body as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message
    ?.content;
  return typeof content === "string" ? content : undefined;
}

/** The content of a complete event stream (one that says `stop` and carries no error), else undefined. */
function streamedReply(text: string): string | undefined {
  let content = "";
  let stopped = false;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const frame = JSON.parse(line.slice(6)) as {
      error?: unknown;
      choices?: Array<{ delta?: { content?: unknown }; finish_reason?: unknown }>;
    };
    if (frame.error !== undefined) return undefined;
    const choice = frame.choices?.[0];
    if (typeof choice?.delta?.content === "string") content += choice.delta.content;
    if (choice?.finish_reason === "stop") stopped = true;
  }
  return stopped ? content : undefined;
}

async function clientLoop(
  options: ClientOptions,
  driver: Driver,
  prefix: string,
  send: (url: string, text: string) => Promise<{ status: number; reply: string | undefined }>,
): Promise<void> {
  let failedLife = 0;
  for (let n = 1; ; n++) {
    const at = await options.lives.next(failedLife);
    if (!at) return;
    const input: SentInput = {
      driver,
      client: prefix,
      life: at.life,
      text: `${prefix}-${n}`,
      acked: false,
      status: "error",
    };
    options.sent.push(input);
    try {
      const { status, reply } = await send(at.url, input.text);
      input.status = status;
      input.acked = status === 200 && reply === `echo: ${input.text}`;
      // Refused while stopping, or a queue that is full: not this client's input to count, try on.
      if (!input.acked) await new Promise((r) => setTimeout(r, 50));
    } catch {
      failedLife = at.life;
    }
  }
}

function post(url: string, token: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
}
