import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  AGENT_CARD_PATH,
  type AgentCard,
  type Message,
  type Part,
  Role,
  type Task,
  TaskState,
} from "@a2a-js/sdk";
import {
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import express from "express";

/** One message the agent received: its text, the context and task it named, and whether it continued a task. */
export interface A2aReceived {
  text: string;
  contextId: string;
  taskId: string;
  continuedTask: boolean;
}

export interface LocalA2aAgent {
  /** The base URL: its card is at `/.well-known/agent-card.json`. */
  url: string;
  /** Every message received, oldest first (the `requests` of `useServer`). */
  requests: A2aReceived[];
  /** Every HTTP request (the card's and the JSON-RPC calls), oldest first, with its W3C trace headers. */
  http: Array<{ path: string; traceparent?: string; tracestate?: string }>;
  close(): Promise<void>;
}

const text = (value: string): Part => ({
  content: { $case: "text", value },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});

function agentMessage(value: string, contextId: string, taskId = ""): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [text(value)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function task(id: string, contextId: string, state: TaskState, reply: string, history: Message[]): Task {
  return {
    id,
    contextId,
    status: { state, message: agentMessage(reply, contextId, id), timestamp: new Date().toISOString() },
    artifacts: [],
    history,
    metadata: undefined,
  };
}

/**
 * A real A2A agent built with `@a2a-js/sdk`'s server classes (DefaultRequestHandler, JSON-RPC over express)
 * on 127.0.0.1. It answers with how many messages its context has had; `[need-input]` leaves a task waiting
 * for input, which the next message continues; `[fail]` fails the task.
 */
export async function startA2aAgent(): Promise<LocalA2aAgent> {
  const requests: A2aReceived[] = [];
  const turns = new Map<string, number>();
  const executor: AgentExecutor = {
    async execute(context: RequestContext, bus: ExecutionEventBus) {
      const message = context.userMessage;
      const said = message.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
      requests.push({
        text: said,
        contextId: message.contextId,
        taskId: message.taskId,
        continuedTask: context.task !== undefined,
      });
      const turn = (turns.get(context.contextId) ?? 0) + 1;
      turns.set(context.contextId, turn);
      const history = [...(context.task?.history ?? []), message];
      if (said.includes("[fail]")) {
        bus.publish({
          kind: "task",
          data: task(context.taskId, context.contextId, TaskState.TASK_STATE_FAILED, "tool broke", history),
        });
      } else if (said.includes("[need-input]")) {
        bus.publish({
          kind: "task",
          data: task(
            context.taskId,
            context.contextId,
            TaskState.TASK_STATE_INPUT_REQUIRED,
            "Which file?",
            history,
          ),
        });
      } else if (context.task) {
        bus.publish({
          kind: "task",
          data: task(
            context.taskId,
            context.contextId,
            TaskState.TASK_STATE_COMPLETED,
            `done with ${said}`,
            history,
          ),
        });
      } else {
        bus.publish({ kind: "message", data: agentMessage(`a2a turn ${turn}: ${said}`, context.contextId) });
      }
      bus.finished();
    },
    async cancelTask() {},
  };
  const http: LocalA2aAgent["http"] = [];
  const app = express();
  app.use((req, _res, next) => {
    const { traceparent, tracestate } = req.headers;
    http.push({
      path: req.path,
      ...(typeof traceparent === "string" ? { traceparent } : {}),
      ...(typeof tracestate === "string" ? { tracestate } : {}),
    });
    next();
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card: AgentCard = {
    name: "local test agent",
    description: "answers over A2A",
    supportedInterfaces: [
      { url: `${url}/a2a`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    ],
    provider: undefined,
    version: "1.0.0",
    capabilities: { streaming: true, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use("/a2a", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return {
    url,
    requests,
    http,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
