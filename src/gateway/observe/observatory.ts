// The observer the call path reports to when anything watches: it times each request once and hands the result to
// the metrics, the traces, the status page's counts and the audit log, whichever are on.
import { performance } from "node:perf_hooks";
import type { Context, Span } from "@opentelemetry/api";
import { tracesWanted, type AuditArguments } from "../../config/observe.js";
import type { GaggleConfig } from "../../config/index.js";
import {
  CANCELLED,
  cancelledOr,
  failureOutcome,
  outcomeOf,
  type ChildOperation,
  type ChildRequest,
  type ClientRequest,
  type EndedSession,
  type Observer,
  type Outcome,
  type ServerOperation,
} from "../../shared/observer.js";
import type { Gaggle } from "../gaggle.js";
import { metaToolName } from "../meta/meta-tools.js";
import { AuditFile, CallRing } from "./audit-log.js";
import { answerLineBytes } from "../../shared/answer-line.js";
import { estimatedJsonBytes, recordedArguments, withTime, type CallRecord } from "./audit-record.js";
import { CallStats } from "./call-stats.js";
import type { GaugeSource, Metrics } from "./metrics.js";
import type { Tracing } from "./tracing.js";

/** The requests the audit log and the page's recent calls record. */
const AUDITED = new Set(["tools/call", "resources/read", "prompts/get"]);

const NOTHING: GaugeSource = { children: () => [], clientSessions: () => 0, background: () => [] };

export interface ObservatoryOptions {
  /** Serve Prometheus metrics: an admin listener or --http is there to show them. */
  metrics: boolean;
  env: NodeJS.ProcessEnv;
}

/** Opens what the config and the environment ask for; OpenTelemetry is loaded only when traces are wanted. */
export async function openObservatory(config: GaggleConfig, options: ObservatoryOptions): Promise<Observatory> {
  const metrics = options.metrics ? await import("./metrics.js") : undefined;
  const tracing = tracesWanted(config.telemetry, options.env) ? await import("./tracing.js") : undefined;
  const { path } = config.audit;
  const audit = path === undefined ? undefined : new AuditFile({ ...config.audit, path });
  await audit?.open();
  return new Observatory({
    metrics: metrics && ((source) => new metrics.Metrics(source)),
    tracing: tracing && new tracing.Tracing(config.telemetry),
    audit,
    arguments: config.audit.arguments,
  });
}

interface Parts {
  metrics: ((source: GaugeSource) => Metrics) | undefined;
  tracing: Tracing | undefined;
  audit: AuditFile | undefined;
  arguments: AuditArguments;
}

export class Observatory implements Observer {
  /** Each child's calls, for the status page. */
  readonly stats = new CallStats();
  /** The latest audited requests, for the status page. */
  readonly recent = new CallRing();
  readonly metrics: Metrics | undefined;
  readonly tracing: Tracing | undefined;
  readonly audit: AuditFile | undefined;
  readonly arguments: AuditArguments;
  private source = NOTHING;

  constructor(parts: Parts) {
    // The gauges read the gateway through `source`, which is attached once the gateway exists.
    this.metrics = parts.metrics?.({
      children: () => this.source.children(),
      clientSessions: () => this.source.clientSessions(),
      background: () => this.source.background(),
    });
    this.tracing = parts.tracing;
    this.audit = parts.audit;
    this.arguments = parts.arguments;
  }

  /** The gateway whose children, clients and background work the gauges read. */
  attach({ router, hub }: Pick<Gaggle, "router" | "hub">): void {
    this.source = {
      children: () => router.names().map((name) => router.status(name)),
      clientSessions: () => hub.size,
      background: () => router.all().flatMap((child) => child.background()),
    };
  }

  clientRequest(request: ClientRequest): ServerOperation {
    return new ServerOp(this, request);
  }

  sessionEnded(session: EndedSession): void {
    this.metrics?.sessionDuration(session.transport, session.durationMs / 1000);
  }

  /** Writes what is pending: the audit file's lines, the traces still batched. */
  async close(): Promise<void> {
    await Promise.allSettled([this.audit?.close(), this.tracing?.shutdown()]);
  }
}

class ServerOp implements ServerOperation {
  private readonly started = performance.now();
  private readonly span: Span | undefined;
  private readonly context: Context | undefined;
  private child: string | undefined;
  private childTool: string | undefined;
  /** A request was sent to the child's wire for it: that request's ChildOp counts the call in the child's stats. */
  private forwarded = false;
  private failure: Outcome | undefined;

  constructor(
    private readonly observatory: Observatory,
    private readonly request: ClientRequest,
  ) {
    const traced = observatory.tracing?.server(request);
    this.span = traced?.span;
    this.context = traced?.context;
  }

  routed(child: string, name?: string): void {
    this.child = child;
    this.childTool = name;
  }

  childRequest(request: ChildRequest): ChildOperation {
    this.forwarded = true;
    return new ChildOp(this.observatory, request, this.context, this.request.principal);
  }

  failed(error: unknown): void {
    this.failure = failureOutcome(error);
  }

  end(answered: Outcome): void {
    const ms = performance.now() - this.started;
    const { failure } = this;
    const outcome = cancelledOr(failure ? outcomeOf(failure.error, failure.message, answered.answer) : answered, this.request.cancel);
    const { method, name } = this.request;
    // Only names gaggle knows become labels: one a client made up never grows the label set.
    const known =
      name !== undefined && (this.child !== undefined || (method === "tools/call" && metaToolName(name) !== undefined)) ? name : undefined;
    const tool = method === "tools/call" ? known : undefined;
    const prompt = method === "prompts/get" ? known : undefined;
    const { metrics, tracing } = this.observatory;
    metrics?.serverOperation(
      { method, tool, prompt, child: this.child, error: outcome.error, protocol: this.request.protocol, transport: this.request.transport },
      ms / 1000,
    );
    if (this.span && tracing) {
      if (this.child !== undefined) this.span.setAttribute("gaggle.child", this.child);
      if (tool !== undefined) this.span.setAttribute("gen_ai.tool.name", tool);
      if (prompt !== undefined) this.span.setAttribute("gen_ai.prompt.name", prompt);
      tracing.end(this.span, outcome, known === undefined ? undefined : `${method} ${known}`);
    }
    // A built-in child answers without a wire, and a call refused for a child (its back-off, its arguments) never
    // reaches one: counted here, so that the child's stats hold every call routed to it.
    if (this.child !== undefined && !this.forwarded) this.observatory.stats.record(this.child, ms, statsError(outcome), this.request.principal);
    if (AUDITED.has(method)) this.record(outcome, ms);
  }

  private record(outcome: Outcome, ms: number): void {
    const { request, observatory } = this;
    const file = observatory.audit;
    const record: CallRecord = {
      principal: request.principal,
      session: request.session,
      client: request.client ? `${request.client.name}/${request.client.version}` : null,
      method: request.method,
      target: request.name ?? request.uri ?? null,
      child: this.child ?? null,
      tool: this.childTool ?? null,
      outcome:
        outcome.error === undefined ? "ok" : outcome.error === "tool_error" ? "tool_error" : outcome.error === CANCELLED ? "cancelled" : "error",
      error: outcome.error === undefined || outcome.error === "tool_error" || outcome.error === CANCELLED ? null : outcome.error,
      duration_ms: Math.round(ms * 10) / 10,
      // Only for the file (the page does not show them), and never by writing the answer out again: a child's
      // answer is counted as the line it came in, anything else estimated from its lengths.
      bytes_in: file ? estimatedJsonBytes(request.arguments ?? {}) : null,
      bytes_out: file && outcome.answer !== undefined ? answerBytes(outcome.answer) : null,
    };
    if (request.method === "tools/call" && observatory.arguments !== "none")
      record.arguments = recordedArguments(request.arguments, observatory.arguments);
    // The time is written out only where it is read: at once for the file, when the page asks for the ring.
    const at = Date.now() - ms;
    observatory.recent.add(at, record);
    file?.write(withTime(at, record));
  }
}

class ChildOp implements ChildOperation {
  private readonly started = performance.now();
  private readonly span: Span | undefined;
  private readonly traced: { span: Span; context: Context } | undefined;

  constructor(
    private readonly observatory: Observatory,
    private readonly request: ChildRequest,
    parent: Context | undefined,
    /** Who made the client's request this one serves. */
    private readonly principal: string,
  ) {
    this.traced = parent && observatory.tracing?.client(parent, request);
    this.span = this.traced?.span;
  }

  meta(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    const { tracing } = this.observatory;
    return this.traced && tracing ? tracing.inject(this.traced, meta) : meta;
  }

  end(ended: Outcome): void {
    const ms = performance.now() - this.started;
    const { request, observatory } = this;
    const outcome = cancelledOr(ended, request.cancel);
    const tool = request.method === "tools/call" ? request.name : undefined;
    const prompt = request.method === "prompts/get" ? request.name : undefined;
    observatory.metrics?.clientOperation(
      { method: request.method, tool, prompt, child: request.child, error: outcome.error, protocol: request.protocol, transport: request.transport },
      ms / 1000,
    );
    observatory.stats.record(request.child, ms, statsError(outcome), this.principal);
    if (this.span) observatory.tracing?.end(this.span, outcome);
  }
}

/** What a child's stats keep of a call that failed; undefined for one that did not, or that its client cancelled. */
function statsError(outcome: Outcome): { type: string; message: string | undefined } | undefined {
  return outcome.error === undefined || outcome.error === CANCELLED ? undefined : { type: outcome.error, message: outcome.message };
}

/** An answer's size: the line it came in from the child, when it is still that child's own, else an estimate. */
function answerBytes(answer: unknown): number {
  return (typeof answer === "object" && answer !== null && answerLineBytes(answer)) || estimatedJsonBytes(answer);
}
