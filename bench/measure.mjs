// Owns the measurements: one checked echo call per target, latency samples, throughput at a fixed depth, summaries.
import { performance } from "node:perf_hooks";

/** Per-call limit: a healthy echo takes well under a millisecond, so this only catches a hang. */
const CALL_TIMEOUT_MS = 10_000;

/**
 * `echo` on server-everything, either called by name (`name`: the name it is listed under, gaggle's proxy mode
 * prefixing it) or wrapped in gaggle's execute_child_tool.
 */
export function echoCaller(endpoint, { viaGaggle, serverId = "everything", name = "echo" }) {
  return async (i) => {
    const message = `bench ${i}`;
    const request = viaGaggle
      ? { name: "execute_child_tool", arguments: { server_id: serverId, tool_name: "echo", arguments: { message } } }
      : { name, arguments: { message } };
    const result = await endpoint.client.callTool(request, undefined, { timeout: CALL_TIMEOUT_MS });
    const text = result.content?.[0]?.text;
    // A gaggle failure is an isError result, not a thrown error: without this check a broken child would look fast.
    if (result.isError || text !== `Echo: ${message}`) {
      throw new Error(`${endpoint.label}: unexpected echo result for "${message}": ${JSON.stringify(result).slice(0, 300)}`);
    }
  };
}

/** echoCaller's options for a gateway in `mode`: meta mode's execute_child_tool, or proxy mode's prefixed name. */
export function gatewayEcho(mode) {
  return mode === "proxy" ? { viaGaggle: false, name: "everything__echo" } : { viaGaggle: true };
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted, p) {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    calls: sorted.length,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted[sorted.length - 1],
    meanMs: sorted.reduce((sum, x) => sum + x, 0) / sorted.length,
  };
}

/** `n` calls one after another; the latency of each in milliseconds. */
export async function latencySamples(call, n) {
  const samples = new Array(n);
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await call(i);
    samples[i] = performance.now() - start;
  }
  return samples;
}

/** `n` calls with `depth` of them in flight at every moment (until the tail); calls per second. */
export async function throughput(call, n, depth) {
  let next = 0;
  const worker = async () => {
    while (next < n) await call(next++);
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(depth, n) }, worker));
  const seconds = (performance.now() - start) / 1000;
  return { calls: n, inFlight: depth, seconds, callsPerSecond: n / seconds };
}

/**
 * Runs `measure(target, name)` on every target in turn, `rounds` times over, so that a slow moment of the machine
 * lands on every target rather than on whichever ran then. Resolves with each target's results, in round order.
 */
export async function interleave(targets, rounds, measure) {
  const results = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, target] of Object.entries(targets)) results[name].push(await measure(target, name));
  }
  return results;
}

/** The middle value (the upper of the two middle ones for an even count). */
export function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

/** The round with the median rate: one noisy round does not move it. */
export function medianRun(runs) {
  const sorted = [...runs].sort((a, b) => a.callsPerSecond - b.callsPerSecond);
  return { ...sorted[Math.floor(sorted.length / 2)], roundsCallsPerSecond: runs.map((run) => run.callsPerSecond) };
}
