// Owns the report: the goals a run is judged by, and the text printed to stdout from a results object.

export const GOALS = {
  maxP50Ratio: 2,
  maxToolsListTokens: 1500,
  // The call path's goals against the bare relay: its p50 and CPU per call on one core, its throughput with many in flight.
  maxOneCoreP50OverRelay: 1.1,
  maxCpuOverRelay: 1.3,
  minDeepThroughputOverRelay: 0.9,
};

/** Token estimate used throughout: JSON characters / 4. */
export function sizeOf(listToolsResult) {
  const chars = JSON.stringify(listToolsResult).length;
  return { tools: listToolsResult.tools.length, chars, tokens: Math.round(chars / 4) };
}

/**
 * The p50 goal is judged twice. On one core a hop is a plain context switch, so the ratio is the work gaggle's
 * hop adds; unpinned, it also holds the machine's cost of waking a process on another core, which a bare relay
 * pays as well (shown beside it).
 */
export function judge(r) {
  const p50Ratio = (latency, name = "gaggle") => latency[name].warm.p50Ms / latency.direct.warm.p50Ms;
  const goal = (name, pass, detail) => ({ name, pass, detail });
  const p50Goal = (where, latency, note = "") => {
    const p50 = p50Ratio(latency);
    const detail = `${p50.toFixed(2)}x (the bare relay: ${p50Ratio(latency, "relay").toFixed(2)}x${note})`;
    return goal(`gaggle sequential p50 within ${GOALS.maxP50Ratio}x of direct, ${where}`, p50 <= GOALS.maxP50Ratio, detail);
  };
  // Idle cores that halt at once make every wake-up on the other core an exit to the hypervisor.
  const haltsAtOnce = r.machine.idle?.endsWith("guest_halt_poll_ns = 0") ? "; idle cores halt at once here, guest_halt_poll_ns = 0" : "";
  const overRelay = (a, b) => a / b;
  const relayGoals = r.oneCore.skipped
    ? []
    : [
        (() => {
          const x = overRelay(r.oneCore.gaggle.warm.p50Ms, r.oneCore.relay.warm.p50Ms);
          return goal(
            `gaggle sequential p50 on one core at most ${GOALS.maxOneCoreP50OverRelay}x the bare relay's`,
            x <= GOALS.maxOneCoreP50OverRelay,
            `${x.toFixed(2)}x`,
          );
        })(),
        (() => {
          const x = overRelay(r.oneCore.gaggle.cpuUsPerCall, r.oneCore.relay.cpuUsPerCall);
          return goal(
            `gaggle CPU per call on one core at most ${GOALS.maxCpuOverRelay}x the bare relay's`,
            x <= GOALS.maxCpuOverRelay,
            `${x.toFixed(2)}x`,
          );
        })(),
      ];
  const deep = overRelay(r.throughput.deep.gaggle.callsPerSecond, r.throughput.deep.relay.callsPerSecond);
  return [
    ...(r.oneCore.skipped ? [] : [p50Goal("every process on one core", r.oneCore)]),
    p50Goal("unpinned", r.latency, haltsAtOnce),
    ...relayGoals,
    goal(
      `gaggle throughput with ${r.settings.depth} in flight at least ${GOALS.minDeepThroughputOverRelay}x the bare relay's`,
      deep >= GOALS.minDeepThroughputOverRelay,
      `${deep.toFixed(2)}x`,
    ),
    ...[
      ["oneChild", "1 child"],
      ["twentyChildren", "20 children"],
    ].map(([key, label]) => {
      const { tokens } = r.toolsList[key];
      return goal(`tools/list under ${GOALS.maxToolsListTokens} tokens, ${label}`, tokens < GOALS.maxToolsListTokens, `${tokens} tokens`);
    }),
  ];
}

const ms = (x) => `${x.toFixed(3)} ms`;
const rate = (x) => `${Math.round(x).toLocaleString("en-US")}/s`;
const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;
const ratio = (x) => `${x.toFixed(2)}x`;
const us = (x) => `${Math.round(x)} µs`;

function table(rows, widths) {
  return rows
    .map(
      (row) =>
        "  " +
        row
          .map((cell, i) => String(cell).padEnd(widths[i] ?? 0))
          .join("")
          .trimEnd(),
    )
    .join("\n");
}

const W = [34, 12, 12, 12, 15, 14];
const HEAD = ["", "direct", "relay", "gaggle", "gaggle/direct", "gaggle/relay"];

function latencyRows(latency, phase, keys) {
  return keys.map((key) => {
    const [d, r, g] = ["direct", "relay", "gaggle"].map((name) => latency[name][phase][`${key}Ms`]);
    return [key, ms(d), ms(r), ms(g), ratio(g / d), ratio(g / r)];
  });
}

function throughputRow(label, runs) {
  const [d, r, g] = ["direct", "relay", "gaggle"].map((name) => runs[name].callsPerSecond);
  return [label, rate(d), rate(r), rate(g), ratio(g / d), ratio(g / r)];
}

/** The least gateway's rates, measured in the same rounds: what a hop that checks and routes each call reaches. */
function leastThroughput(t, s) {
  const [one, deep] = [t.depth1, t.deep];
  return (
    `  the least gateway: ${rate(one.least.callsPerSecond)} at 1 in flight (${ratio(one.least.callsPerSecond / one.relay.callsPerSecond)} the relay's), ` +
    `${rate(deep.least.callsPerSecond)} at ${s.depth} in flight (${ratio(deep.least.callsPerSecond / deep.relay.callsPerSecond)}); ` +
    `gaggle against it: ${ratio(one.gaggle.callsPerSecond / one.least.callsPerSecond)} and ${ratio(deep.gaggle.callsPerSecond / deep.least.callsPerSecond)}`
  );
}

/** CPU per call of the process each client talks to, every thread, in the throughput rounds (median of the rounds). */
function throughputCpu(t, s) {
  const at = (runs) =>
    `direct ${us(runs.direct.cpuUsPerCall)}, relay ${us(runs.relay.cpuUsPerCall)}, gaggle ${us(runs.gaggle.cpuUsPerCall)}` +
    (runs.least ? `, the least gateway ${us(runs.least.cpuUsPerCall)}` : "");
  return `  CPU per call of the process the client talks to (every thread): at 1 in flight ${at(t.depth1)}; at ${s.depth} in flight ${at(t.deep)}`;
}

/** The same sequential calls with every process pinned to one core: no cross-core wake-ups, only each target's work. */
function oneCoreSection(oneCore, s) {
  if (oneCore.skipped) return [`sequential latency on one core: skipped, ${oneCore.skipped}`];
  return [
    `sequential latency, warm, every process pinned to one core (taskset): ${s.sequentialCalls} calls each, fresh processes`,
    table(latencyRows(oneCore, "warm", ["p50", "p90", "mean"]), W),
    `  CPU per call (/proc/<pid>/schedstat): server-everything direct ${us(oneCore.direct.cpuUsPerCall)}, ` +
      `the relay ${us(oneCore.relay.cpuUsPerCall)}, gaggle ${us(oneCore.gaggle.cpuUsPerCall)}`,
    ...(oneCore.reading
      ? [
          `  the reading relay (parses each message once, as any hop that checks them must): p50 ${ms(oneCore.reading.warm.p50Ms)}, ` +
            `CPU ${us(oneCore.reading.cpuUsPerCall)}; gaggle against it: p50 ${ratio(oneCore.gaggle.warm.p50Ms / oneCore.reading.warm.p50Ms)}, ` +
            `CPU ${ratio(oneCore.gaggle.cpuUsPerCall / oneCore.reading.cpuUsPerCall)}`,
        ]
      : []),
    ...(oneCore.least
      ? [
          `  the least gateway (routes and checks each call as gaggle must, and no more): p50 ${ms(oneCore.least.warm.p50Ms)}, ` +
            `CPU ${us(oneCore.least.cpuUsPerCall)}; against the bare relay: p50 ${ratio(oneCore.least.warm.p50Ms / oneCore.relay.warm.p50Ms)} ` +
            `(goal for gaggle ${GOALS.maxOneCoreP50OverRelay}x), CPU ${ratio(oneCore.least.cpuUsPerCall / oneCore.relay.cpuUsPerCall)} ` +
            `(goal for gaggle ${GOALS.maxCpuOverRelay}x); gaggle against it: p50 ${ratio(oneCore.gaggle.warm.p50Ms / oneCore.least.warm.p50Ms)}, ` +
            `CPU ${ratio(oneCore.gaggle.cpuUsPerCall / oneCore.least.cpuUsPerCall)}`,
        ]
      : []),
  ];
}

export function formatReport(r) {
  const { machine: m, settings: s, latency, throughput: t, memory: mem, cpu, toolsList: tl, startup } = r;
  const out = [
    `gaggle bench, ${m.date}`,
    `machine: ${m.cpu}, ${m.cores} cores, ${m.totalMemGiB.toFixed(1)} GiB RAM, Node ${m.node} (${m.platform})` +
      (m.idle ? `, cpuidle ${m.idle}` : ""),
    `child: ${s.child}, tool "echo". Targets, each its own process tree, one SDK client each:`,
    `  direct = the child; relay = a bare byte-copying process in front of it (the cost of any stdio hop);`,
    `  gaggle = node dist/cli.js with the child configured at concurrency = ${s.gaggleConcurrency}.`,
    `  The bench client, the hop and the child share the ${m.cores} cores; calls are interleaved by rounds.`,
    "",
    `sequential latency, warm: ${s.sequentialCalls} calls each after ${s.coldCalls + s.warmUpCalls} warm-up calls, 1 in flight`,
    table([HEAD, ...latencyRows(latency, "warm", ["p50", "p90", "p99", "max", "mean"])], W),
    `sequential latency, cold: the first ${s.coldCalls} calls after start-up (JIT not settled; what a short session sees)`,
    table(latencyRows(latency, "cold", ["p50", "p99", "mean"]), W),
    ...oneCoreSection(r.oneCore, s),
    "",
    `throughput: median of ${s.throughputRounds} rounds of ${s.throughputCalls} calls at 1 in flight and ${s.deepRounds} of ${s.deepCalls} at ${s.depth}, after one round at the same depth`,
    table([HEAD, throughputRow("1 in flight", t.depth1), throughputRow(`${s.depth} in flight`, t.deep)], W),
    ...(t.deep.least ? [leastThroughput(t, s)] : []),
    throughputCpu(t, s),
    table(
      [
        [
          `${s.depth} in flight, concurrency = 1`,
          "",
          "",
          rate(t.serialised.callsPerSecond),
          "(the default: gaggle queues calls and sends the child one at a time)",
        ],
      ],
      W,
    ),
    "",
    "memory (VmRSS from /proc/<pid>/status; peak = VmHWM)",
    table(
      [
        ["gaggle after start-up (initialized, tools/list, no child)", mib(mem.gaggleStartup.rssKiB)],
        ["gaggle after warm-up (child started)", mib(mem.gaggleWarm.rssKiB)],
        ["gaggle after the load", mib(mem.gaggleAfterLoad.rssKiB), `peak ${mib(mem.gaggleAfterLoad.peakKiB)}`],
        ["gaggle's child (server-everything) after the load", mib(mem.gaggleChild.rssKiB), `peak ${mib(mem.gaggleChild.peakKiB)}`],
        ["server-everything run directly, after the load", mib(mem.direct.rssKiB), `peak ${mib(mem.direct.peakKiB)}`],
        ["gaggle, 20 children configured, none started", mib(mem.twentyIdle.rssKiB)],
      ],
      [60, 12],
    ),
    "",
    `CPU time per call over the ${cpu.calls} measured calls of each target (utime+stime, 10 ms ticks)`,
    table(
      [
        ["gaggle", us(cpu.usPerCall.gaggle), "relay", us(cpu.usPerCall.relay)],
        ["gaggle's child", us(cpu.usPerCall.gaggleChild), "relay's child", us(cpu.usPerCall.relayChild)],
        ["server-everything, direct", us(cpu.usPerCall.direct), "bench client", us(cpu.usPerCall.bench)],
      ],
      [30, 12, 16, 12],
    ),
    "",
    "tools/list answer size (tokens ~ JSON chars / 4), gaggle in its default meta-tool mode",
    table(
      [
        ["server-everything, direct", tl.direct],
        ["gaggle, 1 child", tl.oneChild],
        ["gaggle, 20 children", tl.twentyChildren],
      ].map(([label, x]) => [label, `${x.tools} tools`, `${x.chars} chars`, `~${x.tokens} tokens`]),
      [34, 12, 14, 14],
    ),
    `  20 servers like server-everything exposed directly would be ~${(tl.direct.tokens * 20).toLocaleString("en-US")} tokens`,
    `  children started by the 20-child gaggle's tools/list and get_child_status: ${tl.childrenStartedByList} of 20`,
    "",
    "start-up and shutdown            direct        relay         gaggle",
    table(
      [
        ["spawn + initialize", ...["direct", "relay", "gaggle"].map((k) => ms(startup.connectMs[k]))],
        ["first echo call", ...["direct", "relay", "gaggle"].map((k) => ms(startup.firstCallMs[k])), "(gaggle starts its child here)"],
        ["client.close()", ...["direct", "relay", "gaggle"].map((k) => ms(r.shutdown[k]))],
      ],
      [32, 14, 14, 14],
    ),
    "",
    "goals",
    ...r.goals.map((g) => `  ${g.pass ? "PASS" : "FAIL"}  ${g.name}: ${g.detail}`),
    "",
    `cleanup: ${r.cleanup.pids.length} processes started, ${r.cleanup.leftover.length === 0 ? "all gone" : `still alive: ${r.cleanup.leftover.join(", ")}`}`,
    `total run time: ${(r.elapsedMs / 1000).toFixed(1)} s`,
  ];
  return out.join("\n") + "\n";
}
