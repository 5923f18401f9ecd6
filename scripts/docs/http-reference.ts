import { type OpenApiOperation, openApiDocument } from "../../src/gateway/routes/openapi.js";

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  description?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  $ref?: string;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface WebSocketDocs {
  path: string;
  frames: string;
  errors: string;
  methods: Record<string, { params: Record<string, string>; result: string }>;
  events: Record<string, string>;
}

/** Text safe in a table cell and outside code: pipes escaped, angle brackets not taken for HTML. */
const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/</g, "\\<").replace(/\n/g, " ");

function typeText(s: Schema | undefined): string {
  if (!s) return "any";
  if (s.$ref) return s.$ref.replace("#/components/schemas/", "");
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(" | ");
  const types = (Array.isArray(s.type) ? s.type : [s.type ?? "any"]).filter((t) => t !== "null");
  const nullable = Array.isArray(s.type) && s.type.includes("null") ? " or null" : "";
  const base = types[0] === "array" ? `list of ${typeText(s.items)}` : types.join(" or ");
  const bounds: string[] = [];
  if (s.minimum !== undefined) bounds.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined) bounds.push(`≤ ${s.maximum}`);
  if (s.minLength !== undefined && s.minLength > 1) bounds.push(`at least ${s.minLength} characters`);
  if (s.maxLength !== undefined) bounds.push(`at most ${s.maxLength} characters`);
  return [base, ...bounds].join(" ") + nullable;
}

function parametersTable(parameters: readonly Parameter[]): string[] {
  if (parameters.length === 0) return [];
  return [
    "| parameter | in | type | required | description |",
    "|---|---|---|---|---|",
    ...parameters.map(
      (p) =>
        `| \`${p.name}\` | ${p.in} | ${cell(typeText(p.schema))} | ${p.required ? "yes" : "no"} | ${cell(p.description ?? p.schema?.description ?? "")} |`,
    ),
    "",
  ];
}

function bodyTable(operation: OpenApiOperation): string[] {
  const content = operation.requestBody?.content ?? {};
  const lines: string[] = [];
  for (const [type, { schema }] of Object.entries(content)) {
    const s = schema as Schema;
    const fields = Object.entries(s.properties ?? {});
    if (fields.length === 0) {
      lines.push(
        `Body (\`${type}\`): ${cell(typeText(s))}${s.description ? `, ${cell(s.description)}` : ""}.`,
        "",
      );
      continue;
    }
    const required = new Set(s.required ?? []);
    lines.push(
      `Body (\`${type}\`):`,
      "",
      "| field | type | required | description |",
      "|---|---|---|---|",
      ...fields.map(
        ([name, field]) =>
          `| \`${name}\` | ${cell(typeText(field))} | ${required.has(name) ? "yes" : "no"} | ${cell(field.description ?? "")} |`,
      ),
      "",
    );
  }
  return lines;
}

function responseLines(operation: OpenApiOperation): string[] {
  return Object.entries(operation.responses).map(([status, response]) => {
    const r = response as { description?: string; content?: Record<string, { schema?: Schema }> };
    const types = Object.keys(r.content ?? {});
    const more = types.length > 1 ? ` (${types.map((t) => `\`${t}\``).join(", ")})` : "";
    return `- **${status}**: ${cell(r.description ?? "")}${more}`;
  });
}

function operationSection(method: string, path: string, operation: OpenApiOperation): string[] {
  return [
    `### ${method.toUpperCase()} ${path}`,
    "",
    ...(operation.summary ? [`${cell(operation.summary)}.`, ""] : []),
    ...parametersTable((operation.parameters ?? []) as readonly Parameter[]),
    ...bodyTable(operation),
    ...responseLines(operation),
    "",
  ];
}

function webSocketSection(ws: WebSocketDocs): string[] {
  return [
    `## WebSocket: ${ws.path}`,
    "",
    `Frames: ${cell(ws.frames)}.`,
    "",
    `Errors: ${cell(ws.errors)}.`,
    "",
    "| method | params | answers |",
    "|---|---|---|",
    ...Object.entries(ws.methods).map(([name, m]) => {
      const params = Object.entries(m.params).map(([p, what]) => `\`${p}\`: ${cell(what)}`);
      return `| \`${name}\` | ${params.length > 0 ? params.join("; ") : "none"} | ${cell(m.result)} |`;
    }),
    "",
    "| event | data |",
    "|---|---|",
    ...Object.entries(ws.events).map(([name, data]) => `| \`${name}\` | ${cell(data)} |`),
    "",
  ];
}

/** The HTTP and WebSocket reference, from the gateway's own OpenAPI document (GET /api/openapi.json). */
export function httpReference(): string {
  const document = openApiDocument();
  const lines: string[] = ["## HTTP", ""];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      lines.push(...operationSection(method, path, operation));
    }
  }
  lines.push(...webSocketSection(document["x-websocket"] as WebSocketDocs), "");
  return lines.join("\n");
}
