// gaggle served over Streamable HTTP: the SDK's HTTP client calling server-everything's echo through gaggle (--http,
// proxy mode, the child over stdio), against the same client calling server-everything's own Streamable HTTP server,
// in one run: sequential p50 and throughput with 64 calls in flight, each target measured in turn over several rounds.
//
//   node bench/http.mjs        (npm run bench builds dist/ first)
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { echoCaller, interleave, latencySamples, medianRun, summarize, throughput } from "./measure.mjs";
import * as procs from "./procs.mjs";

const SETTINGS = { warmUpCalls: 4000, sequentialCalls: 1000, rounds: 3, throughputCalls: 3000, depth: 64 };
/** The goals: gaggle's p50 at most this share of the direct server's, its throughput at least this multiple. */
const GOALS = { maxP50Ratio: 0.4, minThroughputRatio: 1.2 };

const directWarnings = procs.countListenerWarnings();

/** gaggle serving Streamable HTTP on `port`, its one child server-everything over stdio at concurrency 64, in proxy mode. */
function startGaggle(dir, port) {
  const config = procs.writeConfig(dir, "http.toml", { everything: [`concurrency = ${SETTINGS.depth}`] });
  const off = "[virtual.process]\nenabled = false\n[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n";
  writeFileSync(config, readFileSync(config, "utf8").replace("[gateway]\n", '[gateway]\nexpose = "tools"\n') + off);
  const gaggle = spawn(process.execPath, [procs.GAGGLE_CLI, "--config", config, "--http", `127.0.0.1:${port}`], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...procs.STEADY_ENV },
  });
  let stderr = "";
  gaggle.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  return { gaggle, stderr: () => stderr };
}

function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

async function main() {
  const dir = procs.makeTempDir();
  const [directPort, gagglePort] = [await procs.freePort(), await procs.freePort()];
  const server = await procs.startEverythingHttp(directPort);
  const { gaggle, stderr } = startGaggle(dir, gagglePort);
  const pids = [server.pid, gaggle.pid];
  const clients = [];
  try {
    const direct = await procs.connectHttp(`http://127.0.0.1:${directPort}/mcp`, "direct", () => server.exitCode !== null);
    clients.push(direct);
    const viaGaggle = await procs.connectHttp(`http://127.0.0.1:${gagglePort}/mcp`, "gaggle", () => gaggle.exitCode !== null);
    clients.push(viaGaggle);
    // A tools/list waits for the child's start at most gateway.list_wait_ms; the first call waits for it in any case.
    const targets = {
      direct: echoCaller(direct, { viaGaggle: false }),
      gaggle: echoCaller(viaGaggle, { viaGaggle: false, name: "everything__echo" }),
    };
    await targets.gaggle(-1);
    pids.push(...procs.childrenOf(gaggle.pid));
    await interleave(targets, 1, (call) => latencySamples(call, SETTINGS.warmUpCalls));
    const latency = await interleave(targets, SETTINGS.rounds, async (call) => summarize(await latencySamples(call, SETTINGS.sequentialCalls)));
    const rate = await interleave(targets, SETTINGS.rounds, (call) => throughput(call, SETTINGS.throughputCalls, SETTINGS.depth));
    const p50 = Object.fromEntries(Object.entries(latency).map(([name, runs]) => [name, median(runs.map((run) => run.p50Ms))]));
    const cps = Object.fromEntries(Object.entries(rate).map(([name, runs]) => [name, medianRun(runs)]));
    const p50Ratio = p50.gaggle / p50.direct;
    const rateRatio = cps.gaggle.callsPerSecond / cps.direct.callsPerSecond;
    const rounds = (name) => cps[name].roundsCallsPerSecond.map((x) => x.toFixed(0)).join(", ");
    console.log(`http bench: ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}`);
    console.log(`  one SDK client over Streamable HTTP; direct = server-everything's own Streamable HTTP server;`);
    console.log(`  gaggle = gaggle --http in proxy mode, its child server-everything over stdio at concurrency = ${SETTINGS.depth}`);
    console.log(
      `  sequential p50 (median of ${SETTINGS.rounds} rounds of ${SETTINGS.sequentialCalls})  direct ${p50.direct.toFixed(3)} ms, gaggle ${p50.gaggle.toFixed(3)} ms: ${p50Ratio.toFixed(2)}x`,
    );
    console.log(
      `  throughput, ${SETTINGS.depth} in flight (median of ${SETTINGS.rounds} rounds of ${SETTINGS.throughputCalls})  direct ${cps.direct.callsPerSecond.toFixed(0)}/s (${rounds("direct")}), gaggle ${cps.gaggle.callsPerSecond.toFixed(0)}/s (${rounds("gaggle")}): ${rateRatio.toFixed(2)}x`,
    );
    console.log("goals");
    console.log(`  ${p50Ratio <= GOALS.maxP50Ratio ? "PASS" : "FAIL"}  sequential p50 at most ${GOALS.maxP50Ratio}x direct: ${p50Ratio.toFixed(2)}x`);
    console.log(
      `  ${rateRatio >= GOALS.minThroughputRatio ? "PASS" : "FAIL"}  throughput with ${SETTINGS.depth} in flight at least ${GOALS.minThroughputRatio}x direct: ${rateRatio.toFixed(2)}x`,
    );
    console.log(`  MaxListenersExceededWarning of the bench's own SDK clients: ${directWarnings()}`);
  } catch (error) {
    process.stderr.write(`--- gaggle's stderr ---\n${stderr()}\n`);
    throw error;
  } finally {
    for (const { client } of clients) await client.close().catch(() => {});
    gaggle.kill("SIGTERM");
    server.kill("SIGTERM");
    const leftover = await procs.waitGone(pids, 10_000);
    procs.removeDir(dir);
    if (leftover.length > 0) {
      process.stderr.write(`http bench: processes still alive after closing: ${leftover.join(", ")}\n`);
      process.exitCode = 1;
    }
  }
}

await main();
