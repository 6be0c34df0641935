// gaggle's Prometheus metrics: the MCP operation durations of the OpenTelemetry conventions (what clients ask gaggle,
// what gaggle asks children), the children's state, queues, client sessions, background work and the process's own.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { BackgroundWork } from "../../children/child.js";
import type { RoutedStatus } from "../../children/router.js";
import { LabelHistogram } from "./label-histogram.js";

/**
 * The conventions' bucket boundaries, with finer ones below 10 ms: a gateway's own share of a call is well under
 * a millisecond, and a child's tool is often a few.
 */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** The methods of the MCP specifications; any other a client sends is counted as "_OTHER", so that no client grows the label set. */
const METHODS = new Set([
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  "server/discover",
  "subscriptions/listen",
  "sampling/createMessage",
  "elicitation/create",
  "roots/list",
]);

/** Operation labels: each is one of few values (no argument, no URI, no free text). */
export interface OperationLabels {
  method: string;
  /** A tool or prompt gaggle knows, never a name a client made up. */
  tool?: string | undefined;
  prompt?: string | undefined;
  child?: string | undefined;
  error?: string | undefined;
  protocol?: string | undefined;
  transport: "pipe" | "tcp";
}

const MISNAMED_DEFAULTS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

/** What the gauges read at each scrape. */
export interface GaugeSource {
  children(): RoutedStatus[];
  clientSessions(): number;
  background(): BackgroundWork[];
}

/** Sessions last from seconds (a one-shot client) to days (an editor left open). */
export const SESSION_BUCKETS = [1, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 259200];

export class Metrics {
  readonly registry = new Registry();
  /** A call's labels come from few values: each label set's series is made once, and an observation hashes none. */
  private readonly server: LabelHistogram;
  private readonly client: LabelHistogram;
  private readonly sessions: Histogram<"network_transport">;

  constructor(source: GaugeSource) {
    const registers = [this.registry];
    this.server = new LabelHistogram(
      "mcp_server_operation_duration_seconds",
      "The duration of an MCP request a client made to gaggle, until gaggle answered it (mcp.server.operation.duration).",
      DURATION_BUCKETS,
      this.registry,
    );
    this.client = new LabelHistogram(
      "mcp_client_operation_duration_seconds",
      "The duration of an MCP request gaggle made to a child, until the child answered (mcp.client.operation.duration).",
      DURATION_BUCKETS,
      this.registry,
    );
    this.sessions = new Histogram({
      name: "mcp_server_session_duration_seconds",
      help: "How long a client's session with gaggle lasted, from its start until it closed (mcp.server.session.duration).",
      labelNames: ["network_transport"],
      buckets: SESSION_BUCKETS,
      registers,
    });
    new Gauge({
      name: "gaggle_child_up",
      help: "1 when the child's session is running, else 0.",
      labelNames: ["gaggle_child", "state"],
      registers,
      collect() {
        this.reset();
        for (const child of source.children()) this.set({ gaggle_child: child.name, state: child.state }, child.state === "running" ? 1 : 0);
      },
    });
    new Counter({
      name: "gaggle_child_restarts_total",
      help: "Times the child's session was started again after it ended or failed.",
      labelNames: ["gaggle_child"],
      registers,
      collect() {
        this.reset();
        for (const child of source.children()) this.inc({ gaggle_child: child.name }, child.restarts);
      },
    });
    new Counter({
      name: "gaggle_child_calls_total",
      help: "Tool calls that reached the child, whatever their outcome.",
      labelNames: ["gaggle_child"],
      registers,
      collect() {
        this.reset();
        for (const child of source.children()) this.inc({ gaggle_child: child.name }, child.callsServed);
      },
    });
    new Gauge({
      name: "gaggle_child_queue_calls",
      help: "Tool calls at the child now (running) and waiting for a free slot (waiting).",
      labelNames: ["gaggle_child", "state"],
      registers,
      collect() {
        this.reset();
        for (const child of source.children()) {
          this.set({ gaggle_child: child.name, state: "running" }, child.queue.running);
          this.set({ gaggle_child: child.name, state: "waiting" }, child.queue.waiting);
        }
      },
    });
    new Gauge({
      name: "gaggle_client_sessions",
      help: "Clients connected to gaggle now.",
      registers,
      collect() {
        this.set(source.clientSessions());
      },
    });
    new Gauge({
      name: "gaggle_background_work",
      help: "Background processes, goslings, agents and teams, by kind and state.",
      labelNames: ["kind", "state"],
      registers,
      collect() {
        this.reset();
        const counts = new Map<string, { kind: string; state: string; count: number }>();
        for (const work of source.background()) {
          const key = `${work.kind}\u0000${work.state}`;
          const entry = counts.get(key) ?? { kind: work.kind, state: work.kind === "team" ? "active" : work.state, count: 0 };
          entry.count++;
          counts.set(key, entry);
        }
        for (const { kind, state, count } of counts.values()) this.inc({ kind, state }, count);
      },
    });
    collectDefaultMetrics({ register: this.registry });
    // Gauges that prom-client names like counters, against Prometheus' own naming rules (promtool refuses them):
    // what they count of Node's internals says nothing a person watches gaggle for.
    for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
  }

  serverOperation(labels: OperationLabels, seconds: number): void {
    this.server.seriesOf(labelPath(labels), () => labelValues(labels)).observe(seconds);
  }

  clientOperation(labels: OperationLabels, seconds: number): void {
    this.client.seriesOf(labelPath(labels), () => labelValues(labels)).observe(seconds);
  }

  sessionDuration(transport: "pipe" | "tcp", seconds: number): void {
    this.sessions.observe({ network_transport: transport }, seconds);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** The label names of an operation histogram's series. */
type Labels = Partial<
  Record<
    | "mcp_method_name"
    | "gen_ai_tool_name"
    | "gen_ai_prompt_name"
    | "gen_ai_operation_name"
    | "gaggle_child"
    | "error_type"
    | "mcp_protocol_version"
    | "network_transport",
    string
  >
>;

/** The label set's values in one order, an absent one undefined (apart from ""): the series' path in its histogram. */
function labelPath({ method, tool, prompt, child, error, protocol, transport }: OperationLabels): (string | undefined)[] {
  return [method, tool, prompt, child, error, protocol, transport];
}

function labelValues(labels: OperationLabels): Labels {
  const method = METHODS.has(labels.method) ? labels.method : "_OTHER";
  return {
    mcp_method_name: method,
    ...(labels.tool !== undefined && { gen_ai_tool_name: labels.tool, gen_ai_operation_name: "execute_tool" }),
    ...(labels.prompt !== undefined && { gen_ai_prompt_name: labels.prompt }),
    ...(labels.child !== undefined && { gaggle_child: labels.child }),
    ...(labels.error !== undefined && { error_type: labels.error }),
    ...(labels.protocol !== undefined && { mcp_protocol_version: labels.protocol }),
    network_transport: labels.transport,
  };
}
