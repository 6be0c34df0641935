// gaggle served over Streamable HTTP: a client calling server-everything's echo through gaggle (--http, proxy mode,
// the child over stdio), against the same client calling server-everything's own Streamable HTTP server, in one run:
// sequential p50, throughput with 64 calls in flight and the servers' CPU per call, each target measured in turn over
// several rounds. It is run with two clients: the lean one the goals are judged with, and the SDK's.
//
//   node bench/http.mjs        (npm run bench builds dist/ first)
import { spawn } from "node:child_process";
import { cpus } from "node:os";
import { echoCaller, interleave, latencySamples, median, medianRun, summarize, throughput } from "./measure.mjs";
import { LeanHttpClient } from "./lean-client.mjs";
import * as procs from "./procs.mjs";

const SETTINGS = { warmUpCalls: 4000, sequentialCalls: 1000, rounds: 3, throughputCalls: 3000, depth: 64 };
/** The goals: gaggle's p50 at most this share of the direct server's, its throughput at least this multiple. */
const GOALS = { maxP50Ratio: 0.4, minThroughputRatio: 1.2 };

const directWarnings = procs.countListenerWarnings();

/** gaggle serving Streamable HTTP on `port`, its one child server-everything over stdio at concurrency 64, in proxy mode. */
function startGaggle(dir, port) {
  const config = procs.writeConfig(dir, "http.toml", { everything: [`concurrency = ${SETTINGS.depth}`] }, { expose: "tools", builtIns: false });
  const gaggle = spawn(process.execPath, [procs.GAGGLE_CLI, "--config", config, "--http", `127.0.0.1:${port}`], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...procs.STEADY_ENV },
  });
  let stderr = "";
  gaggle.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  return { gaggle, stderr: () => stderr };
}

/** CPU time per call, in µs, of the processes in `pids` (every thread) and of the bench's own (the client) over `run`. */
async function cpuPerCall(pids, calls, run) {
  const before = pids.map(procs.processCpuNsOf);
  const ownBefore = process.cpuUsage();
  const value = await run();
  const own = process.cpuUsage(ownBefore);
  return {
    value,
    cpuUs: pids.reduce((sum, pid, i) => sum + (procs.processCpuNsOf(pid) - before[i]), 0) / calls / 1000,
    clientCpuUs: (own.user + own.system) / calls,
  };
}

/**
 * One client kind's figures: sequential p50, and throughput with SETTINGS.depth in flight with the CPU per call
 * of the servers behind each target (the direct server; gaggle and its child), medians over the rounds.
 */
async function measureWith(targets, serverPids) {
  await interleave(targets, 1, (call) => latencySamples(call, SETTINGS.warmUpCalls));
  const latency = await interleave(targets, SETTINGS.rounds, async (call) => summarize(await latencySamples(call, SETTINGS.sequentialCalls)));
  const rate = await interleave(
    Object.fromEntries(Object.entries(targets).map(([name, call]) => [name, { name, call }])),
    SETTINGS.rounds,
    async ({ name, call }) => {
      const { value, cpuUs, clientCpuUs } = await cpuPerCall(serverPids[name], SETTINGS.throughputCalls, () =>
        throughput(call, SETTINGS.throughputCalls, SETTINGS.depth),
      );
      return { ...value, cpuUs, clientCpuUs };
    },
  );
  const p50 = Object.fromEntries(Object.entries(latency).map(([name, runs]) => [name, median(runs.map((run) => run.p50Ms))]));
  const cps = Object.fromEntries(
    Object.entries(rate).map(([name, runs]) => [
      name,
      { ...medianRun(runs), cpuUs: median(runs.map((run) => run.cpuUs)), clientCpuUs: median(runs.map((run) => run.clientCpuUs)) },
    ]),
  );
  return { p50, cps, p50Ratio: p50.gaggle / p50.direct, rateRatio: cps.gaggle.callsPerSecond / cps.direct.callsPerSecond };
}

function report(title, { p50, cps, p50Ratio, rateRatio }) {
  const rounds = (name) => cps[name].roundsCallsPerSecond.map((x) => x.toFixed(0)).join(", ");
  console.log(title);
  console.log(
    `  sequential p50 (median of ${SETTINGS.rounds} rounds of ${SETTINGS.sequentialCalls})  direct ${p50.direct.toFixed(3)} ms, gaggle ${p50.gaggle.toFixed(3)} ms: ${p50Ratio.toFixed(2)}x`,
  );
  console.log(
    `  throughput, ${SETTINGS.depth} in flight (median of ${SETTINGS.rounds} rounds of ${SETTINGS.throughputCalls})  direct ${cps.direct.callsPerSecond.toFixed(0)}/s (${rounds("direct")}), gaggle ${cps.gaggle.callsPerSecond.toFixed(0)}/s (${rounds("gaggle")}): ${rateRatio.toFixed(2)}x`,
  );
  console.log(
    `  server CPU per call at ${SETTINGS.depth} in flight  direct ${cps.direct.cpuUs.toFixed(0)} µs, gaggle and its child ${cps.gaggle.cpuUs.toFixed(0)} µs: ${(cps.gaggle.cpuUs / cps.direct.cpuUs).toFixed(2)}x`,
  );
  console.log(
    `  the client's own CPU per call  with direct ${cps.direct.clientCpuUs.toFixed(0)} µs, with gaggle ${cps.gaggle.clientCpuUs.toFixed(0)} µs`,
  );
}

async function main() {
  const dir = procs.makeTempDir();
  const [directPort, gagglePort] = [await procs.freePort(), await procs.freePort()];
  const server = await procs.startEverythingHttp(directPort);
  const { gaggle, stderr } = startGaggle(dir, gagglePort);
  const pids = [server.pid, gaggle.pid];
  const clients = [];
  const urls = { direct: `http://127.0.0.1:${directPort}/mcp`, gaggle: `http://127.0.0.1:${gagglePort}/mcp` };
  const callers = (direct, viaGaggle) => ({
    direct: echoCaller(direct, { viaGaggle: false }),
    gaggle: echoCaller(viaGaggle, { viaGaggle: false, name: "everything__echo" }),
  });
  try {
    const direct = await procs.connectHttp(urls.direct, "direct", () => server.exitCode !== null);
    clients.push(direct);
    const viaGaggle = await procs.connectHttp(urls.gaggle, "gaggle", () => gaggle.exitCode !== null);
    clients.push(viaGaggle);
    const sdk = callers(direct, viaGaggle);
    // A tools/list waits for the child's start at most gateway.list_wait_ms; the first call waits for it in any case.
    await sdk.gaggle(-1);
    pids.push(...procs.childrenOf(gaggle.pid));
    const serverPids = { direct: [server.pid], gaggle: pids.slice(1) };
    const lean = { direct: await LeanHttpClient.connect(urls.direct), gaggle: await LeanHttpClient.connect(urls.gaggle) };
    clients.push({ client: lean.direct }, { client: lean.gaggle });
    const leanRun = await measureWith(callers({ label: "direct", client: lean.direct }, { label: "gaggle", client: lean.gaggle }), serverPids);
    const sdkRun = await measureWith(sdk, serverPids);
    const { p50Ratio, rateRatio } = leanRun;
    console.log(`http bench: ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}`);
    console.log(`  direct = server-everything's own Streamable HTTP server;`);
    console.log(`  gaggle = gaggle --http in proxy mode, its child server-everything over stdio at concurrency = ${SETTINGS.depth}`);
    report("a lean client (bench/lean-client.mjs: node:http, kept-alive sockets)", leanRun);
    report("the SDK's client (StreamableHTTPClientTransport), whose own CPU per call bounds both targets' throughput here", sdkRun);
    console.log("goals (with the lean client, which measures the servers rather than itself)");
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
