import { type Command, Option } from "commander";
import { routeEnvelope } from "../../keys/index.js";
import type { ChatType, EntryPoint, Envelope } from "../../model/envelope.js";
import { isSessiondError, SessiondError } from "../../model/errors.js";
import { type GlobalOptions, loadCliConfig, routingFromConfig } from "../context.js";
import { UsageError } from "../errors.js";
import type { CliIo } from "../io.js";
import { timestamp } from "../options.js";

const CHAT_TYPES = ["direct", "group", "channel", "thread"] as const satisfies readonly ChatType[];
type EntryPointKind = Exclude<EntryPoint["kind"], "channel">;
const ENTRY_POINTS = [
  "web_chat",
  "websocket",
  "webhook",
  "openai_compat",
  "app_api",
  "chat_webhook",
  "subagent",
] as const satisfies readonly EntryPointKind[];

interface RouteOptions extends GlobalOptions {
  channel?: string;
  chatType: ChatType;
  chatId?: string;
  sender?: string;
  account?: string;
  thread?: string;
  agent?: string;
  replyTarget?: string;
  entryPoint?: EntryPointKind;
  sessionId?: string;
  connectionId?: string;
  web?: boolean;
  subjectRef?: string;
  gatewayToken?: boolean;
  clientIp?: string;
  user?: string;
  type?: string;
  entity?: string;
  at?: number;
  parentAgent?: string;
  json?: boolean;
}

type EntryPointFlag =
  | "sessionId"
  | "connectionId"
  | "web"
  | "subjectRef"
  | "gatewayToken"
  | "clientIp"
  | "user"
  | "type"
  | "entity"
  | "at"
  | "parentAgent";

/** Which entry points read each entry-point flag; given to any other, it would be silently ignored. */
const FLAG_USERS: Record<EntryPointFlag, readonly EntryPointKind[]> = {
  sessionId: ["web_chat", "websocket", "app_api"],
  connectionId: ["websocket"],
  web: ["websocket"],
  subjectRef: ["webhook"],
  gatewayToken: ["webhook"],
  clientIp: ["openai_compat"],
  user: ["app_api"],
  type: ["chat_webhook"],
  entity: ["chat_webhook"],
  at: ["chat_webhook", "subagent"],
  parentAgent: ["subagent"],
};

const REQUIRED: Partial<Record<EntryPointKind, readonly EntryPointFlag[]>> = {
  websocket: ["connectionId"],
  openai_compat: ["clientIp"],
  app_api: ["user"],
  chat_webhook: ["type"],
  subagent: ["parentAgent", "at"],
};

/** The channel an entry point implies when --channel is not given (what initForKey guesses for its keys). */
const IMPLIED_CHANNEL: Partial<Record<EntryPointKind, string>> = {
  web_chat: "web",
  openai_compat: "openai-compat",
  app_api: "app_api",
  chat_webhook: "webhook",
  subagent: "subagent",
};

/** Envelope fields named in routing errors → the flag that sets them. */
const FIELD_FLAGS: Record<string, string> = {
  channel: "--channel",
  agent: "--agent",
  account: "--account",
  "sender.id": "--sender",
  "chat.id": "--chat-id",
  "chat.type": "--chat-type",
  "chat.threadId": "--thread",
  "entryPoint.sessionId": "--session-id",
  "entryPoint.connectionId": "--connection-id",
  "entryPoint.subjectRef": "--subject-ref",
  "entryPoint.clientIp": "--client-ip",
  "entryPoint.user": "--user",
  "entryPoint.type": "--type",
  "entryPoint.entity": "--entity",
  "entryPoint.at": "--at",
  "entryPoint.parentAgent": "--parent-agent",
};

function flag(name: string): string {
  return `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

export function registerRoute(program: Command, io: CliIo): void {
  program
    .command("route")
    .description(
      "print the session key a message with these facts routes to (uses the config, not the store)",
    )
    .option("--channel <name>", "channel the message came on (telegram, discord, slack, web, …)")
    .addOption(new Option("--chat-type <type>", "kind of chat").choices(CHAT_TYPES).default("direct"))
    .option("--chat-id <id>", "the platform's conversation id (default: the sender)")
    // A common slip: Commander's own guess for it is --at.
    .addOption(new Option("--chat <id>").hideHelp())
    .option("--sender <id>", "the sender's id on the channel")
    .option("--account <id>", "the bot account that received the message")
    .option("--thread <id>", "thread id inside the chat")
    .option("--agent <id>", "the agent the message is routed to (default: the configured default)")
    .option("--reply-target <target>", "where the answer goes (ZeroClaw scopes)")
    .addOption(new Option("--entry-point <kind>", "route as a non-channel entry point").choices(ENTRY_POINTS))
    .option("--session-id <id>", "session id the client names (web_chat, websocket, app_api)")
    .option("--connection-id <id>", "WebSocket connection id (websocket)")
    .option("--web", "the WebSocket is on channel web (websocket)")
    .option("--subject-ref <ref>", "subject the webhook is about (webhook)")
    .option("--gateway-token", "the request carried the gateway token (webhook)")
    .option("--client-ip <ip>", "client address (openai_compat)")
    .option("--user <id>", "API user (app_api)")
    .option("--type <type>", "event type (chat_webhook)")
    .option("--entity <id>", "object the event is about (chat_webhook)")
    .addOption(
      new Option("--at <time>", "event time, ms since epoch or ISO date (chat_webhook, subagent)").argParser(
        timestamp,
      ),
    )
    .option("--parent-agent <id>", "the agent that started the run (subagent)")
    .option("--json", "print the whole route as JSON")
    .action((_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<RouteOptions & { chat?: string }>();
      if (options.chat !== undefined)
        throw new UsageError("unknown option '--chat' (did you mean --chat-id?)");
      const envelope = envelopeFrom(options);
      const routing = routingFromConfig(loadCliConfig(options, io));
      let route: ReturnType<typeof routeEnvelope>;
      try {
        route = routeEnvelope(envelope, routing);
      } catch (error) {
        throw withFlagHint(error);
      }
      io.stdout(options.json ? `${JSON.stringify(route, null, 2)}\n` : `${route.key}\n`);
    });
}

function envelopeFrom(options: RouteOptions): Envelope {
  const kind = options.entryPoint;
  for (const name of Object.keys(FLAG_USERS) as EntryPointFlag[]) {
    const users = FLAG_USERS[name];
    if (options[name] !== undefined && (kind === undefined || !users.includes(kind))) {
      throw new UsageError(`${flag(name)} only applies with --entry-point ${users.join("|")}`);
    }
  }
  for (const name of kind ? (REQUIRED[kind] ?? []) : []) {
    if (options[name] === undefined) throw new UsageError(`--entry-point ${kind} needs ${flag(name)}`);
  }
  if (kind === undefined && options.sender === undefined) {
    throw new UsageError("--sender is required to route a channel message");
  }
  const channel =
    options.channel ??
    (kind === "websocket" && options.web ? "web" : kind ? IMPLIED_CHANNEL[kind] : undefined);
  if (channel === undefined) {
    throw new UsageError(kind ? `--entry-point ${kind} needs --channel` : "--channel is required");
  }
  const sender = options.sender ?? "";
  const envelope: Envelope = {
    channel,
    chat: {
      type: options.chatType,
      id: options.chatId ?? sender,
      ...(options.thread !== undefined ? { threadId: options.thread } : {}),
    },
    sender: { id: sender },
    text: "",
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
    ...(options.account !== undefined ? { account: options.account } : {}),
    ...(options.replyTarget !== undefined ? { replyTarget: options.replyTarget } : {}),
  };
  if (kind) envelope.entryPoint = entryPointFrom(kind, options);
  return envelope;
}

/** Required flags are checked before this, so the `?? ""` defaults are never read by the router. */
function entryPointFrom(kind: EntryPointKind, o: RouteOptions): EntryPoint {
  const sessionId = o.sessionId !== undefined ? { sessionId: o.sessionId } : {};
  switch (kind) {
    case "web_chat":
      return { kind, ...sessionId };
    case "websocket":
      return { kind, connectionId: o.connectionId ?? "", web: o.web === true, ...sessionId };
    case "webhook":
      return {
        kind,
        ...(o.subjectRef !== undefined ? { subjectRef: o.subjectRef } : {}),
        ...(o.gatewayToken ? { gatewayToken: true } : {}),
      };
    case "openai_compat":
      return { kind, clientIp: o.clientIp ?? "" };
    case "app_api":
      return { kind, user: o.user ?? "", ...sessionId };
    case "chat_webhook":
      return {
        kind,
        type: o.type ?? "",
        ...(o.entity !== undefined ? { entity: o.entity } : {}),
        ...(o.at !== undefined ? { at: o.at } : {}),
      };
    case "subagent":
      return { kind, parentAgent: o.parentAgent ?? "", at: o.at ?? 0 };
  }
}

/** A routing error names an envelope field; the CLI user needs the flag that sets it. */
function withFlagHint(error: unknown): unknown {
  if (!isSessiondError(error)) return error;
  const field = error.details?.field;
  const hint = typeof field === "string" ? FIELD_FLAGS[field] : undefined;
  if (!hint) return error;
  return new SessiondError(error.code, `${error.message} (set by ${hint})`, {
    cause: error,
    ...(error.details ? { details: { ...error.details } } : {}),
  });
}
