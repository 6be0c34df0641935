// A remote child's call path: server-everything over Streamable HTTP, called directly by the SDK's client and
// through gaggle (a stdio client, the child reached over HTTP), in one run: sequential latency and throughput,
// each target measured in turn over several rounds. Prints medians and the ratios gaggle / direct.
//
//   node bench/remote.mjs        (npm run bench builds dist/ first)
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { echoCaller, interleave, latencySamples, median, medianRun, summarize, throughput } from "./measure.mjs";
import * as procs from "./procs.mjs";

const SETTINGS = { warmUpCalls: 3000, sequentialCalls: 1000, rounds: 3, throughputCalls: 2000, depth: 16 };

// The SDK client connected directly prints a warning per call past 1,500 (see countListenerWarnings).
const directWarnings = procs.countListenerWarnings();

async function main() {
  const dir = procs.makeTempDir();
  const port = await procs.freePort();
  const server = await procs.startEverythingHttp(port);
  const url = `http://127.0.0.1:${port}/mcp`;
  const off = "[virtual.process]\nenabled = false\n[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n";
  const config = join(dir, "remote.toml");
  writeFileSync(
    config,
    `[gateway]\nlog_level = "warn"\n${off}\n[mcp_servers.everything]\ntype = "http"\nurl = ${JSON.stringify(url)}\nconcurrency = ${SETTINGS.depth}\n`,
  );

  const direct = new Client({ name: "gaggle-bench", version: "0" }, { capabilities: {} });
  await direct.connect(new StreamableHTTPClientTransport(new URL(url)));
  const gaggle = await procs.Endpoint.start("gaggle", process.execPath, [procs.GAGGLE_CLI, "--config", config]);
  const targets = {
    direct: echoCaller({ label: "direct", client: direct }, { viaGaggle: false }),
    gaggle: echoCaller(gaggle, { viaGaggle: true }),
  };
  try {
    for (const call of Object.values(targets)) await latencySamples(call, SETTINGS.warmUpCalls);
    const latency = await interleave(targets, SETTINGS.rounds, async (call) => summarize(await latencySamples(call, SETTINGS.sequentialCalls)));
    const rate = await interleave(targets, SETTINGS.rounds, (call) => throughput(call, SETTINGS.throughputCalls, SETTINGS.depth));
    const p50 = Object.fromEntries(Object.entries(latency).map(([name, runs]) => [name, median(runs.map((run) => run.p50Ms))]));
    const cps = Object.fromEntries(Object.entries(rate).map(([name, runs]) => [name, medianRun(runs).callsPerSecond]));
    console.log(`remote bench: ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}; server-everything over Streamable HTTP`);
    console.log(
      `  sequential p50     direct ${p50.direct.toFixed(3)} ms, gaggle ${p50.gaggle.toFixed(3)} ms: ${(p50.gaggle / p50.direct).toFixed(2)}x`,
    );
    console.log(
      `  throughput (${SETTINGS.depth} in flight)  direct ${cps.direct.toFixed(0)}/s, gaggle ${cps.gaggle.toFixed(0)}/s: ${(cps.gaggle / cps.direct).toFixed(2)}x`,
    );
    const gaggleWarnings = gaggle.stderrTail.filter((line) => line.includes("MaxListenersExceededWarning")).length;
    console.log(`  MaxListenersExceededWarning  direct client ${directWarnings()}, gaggle ${gaggleWarnings} (of its last stderr lines)`);
  } finally {
    await direct.close();
    await gaggle.close();
    server.kill("SIGTERM");
    procs.removeDir(dir);
  }
}

await main();
