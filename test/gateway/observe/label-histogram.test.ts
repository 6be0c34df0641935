// gaggle's operation histograms are served exactly as prom-client's own Histogram serves the same observations.
import { Histogram, Registry, type RegistryContentType } from "prom-client";
import { describe, expect, it } from "vitest";
import { LabelHistogram } from "../../../src/gateway/observe/label-histogram.js";
import { DURATION_BUCKETS } from "../../../src/gateway/observe/metrics.js";

const LABELS: Array<Record<string, string>> = [
  { mcp_method_name: "tools/call", gen_ai_tool_name: "echo", gen_ai_operation_name: "execute_tool", gaggle_child: "a", network_transport: "tcp" },
  { mcp_method_name: "tools/list", network_transport: "pipe" },
  {
    mcp_method_name: "tools/call",
    gen_ai_tool_name: 'say "hi"\n\\',
    error_type: "tool_error",
    mcp_protocol_version: "2025-11-25",
    network_transport: "tcp",
  },
];
/** Below, on and above bounds, past the last one, zero and fractions whose sum rounds. */
const VALUES = [0, 0.0001, 0.0005, 0.0007, 0.001, 0.3, 0.1 + 0.2, 5, 299.9, 300, 301, 1e6, 0.004];

function both(contentType: RegistryContentType = Registry.PROMETHEUS_CONTENT_TYPE) {
  const theirs = new Registry<RegistryContentType>();
  const ours = new Registry<RegistryContentType>();
  theirs.setContentType(contentType);
  ours.setContentType(contentType);
  const name = "mcp_server_operation_duration_seconds";
  const help = "The duration, with a \\ and\na new line.";
  const histogram = new Histogram({
    name,
    help,
    labelNames: Object.keys(Object.assign({}, ...LABELS)),
    buckets: DURATION_BUCKETS,
    registers: [theirs],
  });
  const labelled = new LabelHistogram(name, help, DURATION_BUCKETS, ours);
  VALUES.forEach((value, i) => {
    const labels = LABELS[i % LABELS.length]!;
    histogram.observe(labels, value);
    labelled.seriesOf([String(i % LABELS.length)], () => labels).observe(value);
  });
  return { theirs, ours, histogram, labelled };
}

describe("LabelHistogram", () => {
  it("writes the text prom-client's Histogram writes for the same observations", async () => {
    const { theirs, ours } = both();
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('mcp_server_operation_duration_seconds_bucket{le="0.0005",mcp_method_name="tools/call"');
  });

  it("writes the same OpenMetrics text and JSON", async () => {
    const { theirs, ours } = both(Registry.OPENMETRICS_CONTENT_TYPE);
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("is emptied by the registry's reset, as prom-client's is", async () => {
    const { theirs, ours } = both();
    theirs.resetMetrics();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).not.toContain("_bucket");
  });

  it("finds a series by its label values, an absent one apart from an empty one", async () => {
    const registry = new Registry();
    const labelled = new LabelHistogram("paths_seconds", "Paths.", DURATION_BUCKETS, registry);
    const made: string[] = [];
    const series = (values: (string | undefined)[], tool: string) =>
      labelled.seriesOf(values, () => {
        made.push(tool);
        return { tool };
      });
    series(["tools/call", undefined, "a"], "absent").observe(1);
    series(["tools/call", "", "a"], "empty").observe(2);
    series(["tools/call", undefined, "a"], "again").observe(3);
    series(["tools/call", undefined, "b"], "other").observe(4);
    expect(made).toEqual(["absent", "empty", "other"]);
    const text = await registry.metrics();
    expect(text).toContain('paths_seconds_sum{tool="absent"} 4');
    expect(text).toContain('paths_seconds_sum{tool="empty"} 2');
    expect(text.indexOf('tool="absent"')).toBeLessThan(text.indexOf('tool="empty"'));
  });

  it("refuses a value that is not a number, as prom-client does", () => {
    const { histogram, labelled } = both();
    expect(() => histogram.observe(LABELS[0]!, Number.NaN)).toThrow(TypeError);
    expect(() => labelled.seriesOf(["0"], () => LABELS[0]!).observe(Number.NaN)).toThrow(TypeError);
  });
});
