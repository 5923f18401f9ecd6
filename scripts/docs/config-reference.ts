import { z } from "zod";
import { configFileSchema } from "../../src/config/schema.js";

interface JsonSchema {
  type?: string;
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  pattern?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** Mappings that repeat one listed elsewhere: named, not listed again. */
const SAME_AS: Record<string, string> = {
  "agents[].compaction": "the keys of `compaction` (not `model`), for this agent",
  "session.reset_by_type": "`direct`, `group`, `thread`: each a rule as `session.reset` (not `keep_archive`)",
  "session.reset_by_channel":
    "per channel: a rule as `session.reset`, or rules per chat type as `reset_by_type`",
};

function typeText(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => String(v)).join(" \\| ");
  if (s.anyOf) return s.anyOf.map(typeText).join(" or ");
  if (s.type === "array") return `list of ${s.items ? typeText(s.items) : "values"}`;
  if (s.type === "object") return s.properties ? "mapping" : "mapping of names";
  if (s.type === "string" && s.format === "uri") return "URL";
  const bounds: string[] = [];
  if (s.exclusiveMinimum !== undefined) bounds.push(`> ${s.exclusiveMinimum}`);
  if (s.minimum !== undefined) bounds.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined && s.maximum < UNBOUNDED) bounds.push(`≤ ${s.maximum}`);
  return [s.type ?? "any", ...bounds].join(" ");
}

interface Row {
  key: string;
  type: string;
  description: string;
}

function rows(schema: JsonSchema, path: string, out: Row[]): Row[] {
  const described = (s: JsonSchema) => (s.description ?? "").replace(/\|/g, "\\|").replace(/\n/g, " ");
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const key = path ? `${path}.${name}` : name;
    if (SAME_AS[key]) {
      out.push({ key, type: "mapping", description: SAME_AS[key] });
      continue;
    }
    const nested =
      child.type === "array" && child.items?.properties
        ? { schema: child.items, path: `${key}[]` }
        : child.type === "object" && !child.properties && typeof child.additionalProperties === "object"
          ? { schema: child.additionalProperties, path: `${key}.<name>` }
          : child.properties
            ? { schema: child, path: key }
            : undefined;
    if (!nested || nested.schema.anyOf || !nested.schema.properties) {
      out.push({ key, type: typeText(child), description: described(child) });
      continue;
    }
    if (child.description) out.push({ key, type: typeText(child), description: described(child) });
    rows(nested.schema, nested.path, out);
  }
  return out;
}

/** The configuration reference: every key of `sessiond.yaml`, from the zod schema the loader validates with. */
export function configReference(): string {
  const schema = z.toJSONSchema(configFileSchema(), { io: "input", unrepresentable: "any" }) as JsonSchema;
  const table = rows(schema, "", []).map((r) => `| \`${r.key}\` | ${r.type} | ${r.description} |`);
  return ["| key | value | meaning |", "|---|---|---|", ...table, ""].join("\n");
}
