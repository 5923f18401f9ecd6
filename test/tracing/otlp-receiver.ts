import { sendJson, startLocalServer } from "../support/http-server.js";

/** One span as an OTLP/HTTP JSON export carries it, with its attributes flattened. */
export interface ReceivedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, string | number | boolean | unknown[]>;
  status: { code?: number };
  service: string | undefined;
  /** Its resource's attributes. */
  resource: Record<string, string | number | boolean | unknown[]>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
type OtlpAttribute = { key: string; value: OtlpValue };
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<{
        name: string;
        kind: number;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        attributes?: OtlpAttribute[];
        status?: { code?: number };
      }>;
    }>;
  }>;
}

function attributeValue(value: OtlpValue): string | number | boolean | unknown[] {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  return (value.arrayValue?.values ?? []).map(attributeValue);
}

const flat = (attributes: OtlpAttribute[] = []) =>
  Object.fromEntries(attributes.map((a) => [a.key, attributeValue(a.value)]));

/** A local OTLP/HTTP endpoint taking JSON exports at /v1/traces, as an OpenTelemetry collector does. */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = await startLocalServer((request, res) => {
    if (request.method !== "POST" || request.path !== "/v1/traces") return sendJson(res, 404, {});
    contentTypes.push(String(request.headers["content-type"]));
    const body = request.body as OtlpExport;
    for (const resource of body.resourceSpans ?? []) {
      const resourceAttributes = flat(resource.resource?.attributes);
      const service = resourceAttributes["service.name"];
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          spans.push({
            name: span.name,
            kind: span.kind,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? "",
            attributes: flat(span.attributes),
            status: span.status ?? {},
            service: typeof service === "string" ? service : undefined,
            resource: resourceAttributes,
          });
        }
      }
    }
    sendJson(res, 200, {});
  });
  return { ...server, spans, contentTypes };
}
