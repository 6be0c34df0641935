// OpenTelemetry traces of gaggle's requests, as the MCP semantic conventions describe them: a SERVER span per client
// request, a CLIENT span per request to a child, trace context carried in `_meta` both ways. Loaded only when on.
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from "@opentelemetry/api";
import {
  CompositePropagator,
  ExportResultCode,
  getNumberFromEnv,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
  type ExportResult,
} from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace";
import type { TelemetrySettings } from "../../config/observe.js";
import { GAGGLE_NAME, GAGGLE_VERSION } from "../../shared/version.js";
import type { ChildRequest, ClientRequest, Outcome } from "../../shared/observer.js";
import { lazyLogger } from "../../shared/log.js";

const log = lazyLogger({ subsystem: "traces" });

/**
 * How long a stopping gaggle waits for the collector to take the spans still batched. The exporter would wait its
 * own timeout (ten seconds by default) for one that never answers, and a client that closes gaggle kills it sooner.
 */
export const TRACES_FLUSH_MS = 1000;

/**
 * The batch processor's settings from the standard OTEL_BSP_* variables, which this SDK package leaves to whoever
 * builds the processor; a variable that is unset keeps the SDK's default.
 */
function batchSettings(): { scheduledDelayMillis?: number; exportTimeoutMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number } {
  return {
    scheduledDelayMillis: getNumberFromEnv("OTEL_BSP_SCHEDULE_DELAY"),
    exportTimeoutMillis: getNumberFromEnv("OTEL_BSP_EXPORT_TIMEOUT"),
    maxQueueSize: getNumberFromEnv("OTEL_BSP_MAX_QUEUE_SIZE"),
    maxExportBatchSize: getNumberFromEnv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
  };
}

/** The `_meta` keys trace context travels in, in either era: W3C traceparent and tracestate, and baggage. */
const TRACE_KEYS = ["traceparent", "tracestate", "baggage"];

const metaGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === "string" ? value : undefined;
  },
};

const metaSetter: TextMapSetter<Record<string, unknown>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** A span and the context that makes it the parent of what it starts. */
export interface Traced {
  span: Span;
  context: Context;
}

export class Tracing {
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  /** Where the spans go, for what gaggle says of them. */
  private readonly endpoint: string | undefined;
  private readonly propagator = new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] });

  /** The table's endpoint and headers, else the exporter reads the OTEL_EXPORTER_OTLP_* variables itself. */
  constructor(settings: TelemetrySettings) {
    const url = settings.tracesEndpoint ?? (settings.endpoint && `${settings.endpoint.replace(/\/+$/, "")}/v1/traces`);
    this.endpoint = url ?? envEndpoint(process.env);
    const exporter = new OTLPTraceExporter({
      ...(url && { url }),
      ...(Object.keys(settings.headers).length > 0 && { headers: settings.headers }),
    });
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the table, as everywhere in OpenTelemetry.
    const resource = defaultResource()
      .merge(resourceFromAttributes({ "service.name": settings.serviceName, "service.version": GAGGLE_VERSION }))
      .merge(detectResources({ detectors: [envDetector] }));
    const reported = new ReportedExporter(exporter, this.endpoint);
    this.provider = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter: reported, ...batchSettings() })] });
    this.tracer = this.provider.getTracer(GAGGLE_NAME, GAGGLE_VERSION);
  }

  /** A client's request: its `_meta` trace context, when it carries one, is the parent. */
  server(request: ClientRequest): Traced {
    const parent = request.meta ? this.propagator.extract(ROOT_CONTEXT, request.meta, metaGetter) : ROOT_CONTEXT;
    const attributes: Attributes = {
      "mcp.method.name": request.method,
      "mcp.session.id": request.session,
      "network.transport": request.transport,
      ...(request.protocol !== undefined && { "mcp.protocol.version": request.protocol }),
      ...(request.uri !== undefined && { "mcp.resource.uri": request.uri }),
      ...(request.method === "tools/call" && { "gen_ai.operation.name": "execute_tool" }),
      "gaggle.principal": request.principal,
      ...(request.client && { "gaggle.client.name": request.client.name, "gaggle.client.version": request.client.version }),
    };
    const span = this.tracer.startSpan(request.method, { kind: SpanKind.SERVER, attributes }, parent);
    return { span, context: trace.setSpan(parent, span) };
  }

  /** gaggle's request to a child, a child of the span of the client's request it serves. */
  client(parent: Context, request: ChildRequest): Traced {
    const target = request.name;
    const attributes: Attributes = {
      "mcp.method.name": request.method,
      "network.transport": request.transport,
      "gaggle.child": request.child,
      ...(request.protocol !== undefined && { "mcp.protocol.version": request.protocol }),
      ...(request.uri !== undefined && { "mcp.resource.uri": request.uri }),
      ...(target !== undefined && request.method === "tools/call" && { "gen_ai.tool.name": target, "gen_ai.operation.name": "execute_tool" }),
      ...(target !== undefined && request.method === "prompts/get" && { "gen_ai.prompt.name": target }),
    };
    const name = target === undefined ? request.method : `${request.method} ${target}`;
    const span = this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
    return { span, context: trace.setSpan(parent, span) };
  }

  /** `meta` with the trace context of `traced` in place of any the client sent. */
  inject(traced: Traced, meta: Record<string, unknown> | undefined): Record<string, unknown> {
    const carried: Record<string, unknown> = { ...meta };
    for (const key of TRACE_KEYS) delete carried[key];
    this.propagator.inject(traced.context, carried, metaSetter);
    return carried;
  }

  /** Ends the span; a failure sets error.type and the ERROR status with its message, as the conventions ask. */
  end(span: Span, outcome: Outcome, name?: string): void {
    if (name !== undefined) span.updateName(name);
    if (outcome.error !== undefined) {
      span.setAttribute("error.type", outcome.error);
      span.setStatus({ code: SpanStatusCode.ERROR, ...(outcome.message !== undefined && { message: outcome.message }) });
    }
    span.end();
  }

  /** Sends what is still batched; gaggle calls this as it stops. */
  async shutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, TRACES_FLUSH_MS, false)));
    try {
      const sent = await Promise.race([this.provider.shutdown().then(() => true), late]);
      if (!sent)
        log.warn(
          { endpoint: this.endpoint, withinMs: TRACES_FLUSH_MS },
          "the traces still batched are dropped: the OTLP endpoint did not take them in time as gaggle stopped",
        );
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The OTLP exporter, its failures said in gaggle's log: OpenTelemetry itself logs nothing unless given a logger, and
 * a wrong endpoint would lose every span unseen. Said once when exports start failing and once when they work again,
 * so that a collector that is down does not fill the log.
 */
class ReportedExporter implements SpanExporter {
  private failing = false;

  constructor(
    private readonly exporter: SpanExporter,
    private readonly endpoint: string | undefined,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.exporter.export(spans, (result) => {
      if (result.code === ExportResultCode.FAILED) {
        if (!this.failing) {
          log.error(
            { endpoint: this.endpoint, reason: result.error?.message, spans: spans.length },
            "cannot send traces to the OTLP endpoint; spans are dropped until it takes them: check that a collector listens there ([telemetry] endpoint or OTEL_EXPORTER_OTLP_ENDPOINT) and its headers",
          );
        }
        this.failing = true;
      } else if (this.failing) {
        this.failing = false;
        log.info({ endpoint: this.endpoint }, "the OTLP endpoint takes traces again");
      }
      done(result);
    });
  }

  forceFlush(): Promise<void> {
    return this.exporter.forceFlush?.() ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }
}

/** The traces URL the exporter takes from the standard variables, as the OTLP exporter specification resolves it. */
function envEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined;
}
