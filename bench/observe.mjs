// Owns the bench of gaggle observed: the same echo calls through a gaggle nothing watches and through one with every
// observer on (admin listener and its metrics, traces exported to a local OTLP endpoint, an audit file), interleaved.
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { echoCaller, interleave, latencySamples, medianRun, summarize, throughput } from "./measure.mjs";
import * as procs from "./procs.mjs";

const WARM_UP_CALLS = 6000;
const ROUNDS = 4;
const CALLS_PER_ROUND = 500;
const THROUGHPUT_CALLS = 3000;
const DEPTH = 64;

const dir = procs.makeTempDir();
// An OTLP/HTTP traces endpoint that takes every export and keeps only a count.
let exports = 0;
const sink = createServer((req, res) => {
  req.resume().on("end", () => {
    exports++;
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
}).listen(0, "127.0.0.1");
await once(sink, "listening");

function config(file, watched) {
  const lines = ["[gateway]", 'log_level = "warn"'];
  // BENCH_OBSERVERS (admin, audit, traces; all by default) names the observers of the watched gaggle.
  const wanted = new Set((process.env.BENCH_OBSERVERS ?? "admin,audit,traces").split(","));
  if (watched && wanted.has("admin")) lines.push('admin = "127.0.0.1:0"');
  if (watched && wanted.has("audit")) lines.push("", "[audit]", `path = ${JSON.stringify(join(dir, "audit.jsonl"))}`);
  if (watched && wanted.has("traces")) lines.push("", "[telemetry]", `endpoint = "http://127.0.0.1:${sink.address().port}"`);
  lines.push(
    "",
    "[mcp_servers.everything]",
    `command = ${JSON.stringify(process.execPath)}`,
    `args = [${JSON.stringify(procs.EVERYTHING)}, "stdio"]`,
    "concurrency = 64",
    "",
  );
  const path = join(dir, file);
  writeFileSync(path, lines.join("\n"));
  return path;
}

const endpoints = {
  off: await procs.Endpoint.start("gaggle, nothing observing", process.execPath, [procs.GAGGLE_CLI, "--config", config("off.toml", false)]),
  on: await procs.Endpoint.start("gaggle, every observer on", process.execPath, [procs.GAGGLE_CLI, "--config", config("on.toml", true)]),
};
try {
  const targets = Object.fromEntries(Object.entries(endpoints).map(([name, endpoint]) => [name, echoCaller(endpoint, { viaGaggle: true })]));
  await interleave(targets, 1, (call) => latencySamples(call, WARM_UP_CALLS));
  const cpuBefore = Object.fromEntries(Object.entries(endpoints).map(([name, endpoint]) => [name, procs.cpuNsOf(endpoint.pid)]));
  const latency = await interleave(targets, ROUNDS, (call) => latencySamples(call, CALLS_PER_ROUND));
  const cpuUsPerCall = (name) => (procs.cpuNsOf(endpoints[name].pid) - cpuBefore[name]) / (ROUNDS * CALLS_PER_ROUND) / 1000;
  const deep = await interleave(targets, 3, (call) => throughput(call, THROUGHPUT_CALLS, DEPTH));
  const rows = Object.keys(endpoints).map((name) => {
    const warm = summarize(latency[name].flat());
    return [endpoints[name].label, warm.p50Ms, warm.p99Ms, cpuUsPerCall(name), medianRun(deep[name]).callsPerSecond];
  });
  const pad = (text, width) => String(text).padEnd(width);
  const lines = [
    "gaggle observed: sequential echo calls through execute_child_tool, then 64 in flight",
    `${pad("", 30)}${pad("p50", 10)}${pad("p99", 10)}${pad("CPU/call", 12)}calls/s at 64 in flight`,
    ...rows.map(
      ([label, p50, p99, cpu, rate]) =>
        `${pad(label, 30)}${pad(`${p50.toFixed(3)} ms`, 10)}${pad(`${p99.toFixed(3)} ms`, 10)}${pad(`${cpu.toFixed(1)} µs`, 12)}${rate.toFixed(0)}`,
    ),
    `on/off: p50 ${(rows[1][1] / rows[0][1]).toFixed(2)}x, CPU per call ${(rows[1][3] / rows[0][3]).toFixed(2)}x, throughput ${(rows[1][4] / rows[0][4]).toFixed(2)}x (${exports} trace exports received)`,
    "",
  ];
  process.stdout.write(lines.join("\n"));
} finally {
  for (const endpoint of Object.values(endpoints)) await endpoint.close();
  sink.close();
  procs.removeDir(dir);
}
