import { randomUUID } from "node:crypto";
import type { Message, Part, StreamResponse, TaskState } from "@a2a-js/sdk";
import type { CallInterceptor, Client } from "@a2a-js/sdk/client";
import { SessiondError } from "../model/errors.js";
import { optionalPackage } from "../model/optional-package.js";
import type { RuntimeEvent, RuntimeRun } from "../model/runtime.js";
import { currentTraceHeaders } from "../tracing/spans.js";
import type { DescribedRuntime } from "./echo.js";

export interface A2aRuntimeConfig {
  /** The remote agent's base URL (its card is at `/.well-known/agent-card.json`) or its card's URL. */
  url: string;
  /** Sent with the first message of a new context only. */
  instructions?: string;
}

// Loaded on first use: the SDK is large, and most gateways never talk A2A.
const loadSdk = optionalPackage("@a2a-js/sdk", () => import("@a2a-js/sdk"));
const loadClient = optionalPackage("@a2a-js/sdk", () => import("@a2a-js/sdk/client"));

/** The protocol's enums, from the SDK's root module. */
async function protocol() {
  const { Role, TaskState } = await loadSdk();
  return {
    userRole: Role.ROLE_USER,
    /** The remote agent waits for this conversation: the task id is kept to continue it. */
    waiting: new Set([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]),
    /** Progress reports ("working…") are not part of the reply. */
    progress: new Set([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]),
    failed: new Set([
      TaskState.TASK_STATE_FAILED,
      TaskState.TASK_STATE_REJECTED,
      TaskState.TASK_STATE_CANCELED,
    ]),
    stateName: (state: TaskState) => TaskState[state],
  };
}

/**
 * Every request the client sends carries the current span's `traceparent` / `tracestate` (the turn's
 * `invoke_agent`) as service parameters, which the transports send as HTTP headers. An interceptor runs in
 * the caller's async context, so one client serves every turn with each turn's own trace.
 */
const carryTrace: CallInterceptor = {
  async before({ options }) {
    const headers = currentTraceHeaders();
    if (headers && options) options.serviceParameters = { ...options.serviceParameters, ...headers };
  },
  async after() {},
};

/**
 * An external agent over A2A (`@a2a-js/sdk` client): one remote context per conversation. The context id is
 * the runtime session; the task id is stored with it only while the task waits for input or auth, so the
 * next message continues that task; a finished task is not continued.
 */
export function a2aRuntime(config: A2aRuntimeConfig): DescribedRuntime {
  let client: Promise<Client> | undefined;
  const connect = () => {
    client ??= loadClient()
      .then(({ ClientFactory, ClientFactoryOptions }) =>
        new ClientFactory(
          ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
            clientConfig: { interceptors: [carryTrace] },
          }),
        ).createFromUrl(config.url),
      )
      .catch((error: unknown) => {
        client = undefined;
        if (error instanceof SessiondError) throw error;
        throw new SessiondError(
          "TURN_FAILED",
          `A2A agent at ${config.url} unreachable: ${messageOf(error)}`,
          {
            cause: error,
          },
        );
      });
    return client;
  };
  return {
    kind: "a2a",
    describe: () => `a2a (${config.url})`,
    async *run(run: RuntimeRun): AsyncGenerator<RuntimeEvent, void, undefined> {
      const contextId = run.runtimeSessionId;
      const prompt = run.prompt ?? run.input;
      const text =
        contextId === undefined && config.instructions ? `${config.instructions}\n\n${prompt}` : prompt;
      const a2a = await protocol();
      const message: Message = {
        messageId: randomUUID(),
        contextId: contextId ?? "",
        taskId: run.runtimeSessionData?.taskId ?? "",
        role: a2a.userRole,
        parts: [textPart(text)],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      };
      const remote = await connect();
      let reported: string | undefined;
      let taskId: string | undefined;
      let state: TaskState | undefined;
      let failure = "";
      const stream = remote.sendMessageStream(
        { tenant: "", message, configuration: undefined, metadata: undefined },
        { signal: run.signal },
      );
      for await (const response of stream) {
        const seen = facts(response);
        if (seen.contextId && seen.contextId !== reported) {
          reported = seen.contextId;
          yield { type: "runtime_session", id: seen.contextId };
        }
        if (seen.taskId) taskId = seen.taskId;
        if (seen.state !== undefined) {
          state = seen.state;
          if (a2a.failed.has(state)) failure = seen.text;
        }
        const quiet =
          seen.state !== undefined && (a2a.failed.has(seen.state) || a2a.progress.has(seen.state));
        if (seen.text && !quiet) {
          yield { type: "text", delta: seen.text };
        }
      }
      if (state !== undefined && a2a.failed.has(state)) {
        throw new SessiondError(
          "TURN_FAILED",
          `the A2A task ended ${a2a.stateName(state)}${failure ? `: ${failure}` : ""}`,
        );
      }
      const id = reported ?? contextId;
      if (id !== undefined) {
        const waiting = state !== undefined && a2a.waiting.has(state) ? taskId : undefined;
        // Saved again at the end: the task id is kept only while the task waits, and dropped once it is done.
        yield { type: "runtime_session", id, ...(waiting ? { data: { taskId: waiting } } : {}) };
      }
    },
  };
}

function textPart(text: string): Part {
  return {
    content: { $case: "text", value: text },
    metadata: undefined,
    filename: "",
    mediaType: "text/plain",
  };
}

interface Facts {
  contextId?: string;
  taskId?: string;
  state?: TaskState;
  text: string;
}

function facts(response: StreamResponse): Facts {
  const payload = response.payload;
  switch (payload?.$case) {
    case "message":
      return {
        contextId: payload.value.contextId,
        taskId: payload.value.taskId,
        text: textOf(payload.value.parts),
      };
    case "task": {
      const task = payload.value;
      const facts: Facts = { contextId: task.contextId, taskId: task.id, text: "" };
      if (task.status) {
        facts.state = task.status.state;
        facts.text = textOf(task.status.message?.parts ?? []);
      }
      facts.text += task.artifacts.map((a) => textOf(a.parts)).join("");
      return facts;
    }
    case "statusUpdate": {
      const update = payload.value;
      const facts: Facts = { contextId: update.contextId, taskId: update.taskId, text: "" };
      if (update.status) {
        facts.state = update.status.state;
        facts.text = textOf(update.status.message?.parts ?? []);
      }
      return facts;
    }
    case "artifactUpdate":
      return {
        contextId: payload.value.contextId,
        taskId: payload.value.taskId,
        text: textOf(payload.value.artifact?.parts ?? []),
      };
    default:
      return { text: "" };
  }
}

function textOf(parts: readonly Part[]): string {
  return parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
