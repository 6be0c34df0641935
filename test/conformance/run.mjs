#!/usr/bin/env node
// gaggle's conformance run (npm run conformance): the official MCP conformance suite against
//   direct              the conformance fixture itself (fixtures/conformance-server.mjs) over Streamable HTTP;
//   gaggle-http-child   gaggle over Streamable HTTP, fronting the fixture as an HTTP child;
//   gaggle-stdio-child  gaggle over Streamable HTTP, fronting the fixture as a stdio child;
//   gaggle-modern-http-child, gaggle-modern-stdio-child  the same, with the child reached as a 2026-07-28
//                       server (`protocol = "2026-07-28"`): every request goes to it statelessly;
//   gaggle-both-eras-http-child  gaggle fronting the fixture as an HTTP child whose 2026-07-28 mode cannot ask
//                       its client anything (--modern-cannot-ask), as some servers of both eras: a 2025-11-25
//                       client must still pass all it passes directly (2025-11-25 set only);
// for both requirement sets (2025-11-25 on the stateful wire, 2026-07-28 on the stateless one), plus two of
// the suite's client scenarios with gaggle as the client (test/conformance/gaggle-client.mjs).
// Each run is judged against its baseline in test/conformance/expected/ (an unexpected failure, or a listed
// failure that now passes, fails the run). Prints a totals table; exits 1 if any run disagrees with its baseline.
//
//   node test/conformance/run.mjs                     needs dist/ (npm run build); installs the suite if missing
//   node test/conformance/run.mjs --update-baselines  rewrite the baselines from this run's results
//   node test/conformance/run.mjs --keep              keep the suite's output directory (kept anyway on failure)
//   node test/conformance/run.mjs --verbose           list every failing check, not only the unexpected ones
//   node test/conformance/run.mjs --only=NAME[,NAME]  run only these targets (gaggle-client for the client leg)
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gaggleConfig } from "./gaggle-config.mjs";
import { run, start, stopAll, waitForOutput } from "./processes.mjs";
import { problems, readChecks, scoredScenarios, tally, writeBaseline } from "./results.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const FIXTURE = join(ROOT, "fixtures/conformance-server.mjs");
const CLI = join(ROOT, "dist/cli.js");
const CLIENT = join(HERE, "gaggle-client.mjs");
const EXPECTED = join(HERE, "expected");
const SUITE_DIR = join(HERE, "node_modules/@modelcontextprotocol/conformance");
const SUITE = join(SUITE_DIR, "dist/index.js");
// The suite needs Node 22; this folder's own install brings it (the project itself runs on Node 20).
const SUITE_NODE = join(HERE, "node_modules/.bin/node");

const REQUIREMENTS = ["2025-11-25", "2026-07-28"];
/** The suite's client auth/* scenarios of each requirement set, run with gaggle signing in as a person would. */
const AUTH_IN_BOTH = [
  "metadata-default",
  "metadata-var1",
  "metadata-var2",
  "metadata-var3",
  "basic-cimd",
  "scope-from-www-authenticate",
  "scope-from-scopes-supported",
  "scope-omitted-when-undefined",
  "scope-step-up",
  "scope-retry-limit",
  "token-endpoint-auth-basic",
  "token-endpoint-auth-post",
  "token-endpoint-auth-none",
  "pre-registration",
];
const AUTH_IN_2026 = [
  "resource-mismatch",
  "offline-access-scope",
  "offline-access-not-supported",
  "authorization-server-migration",
  "iss-supported",
  "iss-not-advertised",
  "iss-supported-missing",
  "iss-wrong-issuer",
  "iss-unexpected",
  "iss-normalized",
  "metadata-issuer-mismatch",
];
const AUTH_SCENARIOS = { "2025-11-25": AUTH_IN_BOTH, "2026-07-28": [...AUTH_IN_BOTH, ...AUTH_IN_2026] };
/**
 * Auth scenarios no revision requires: extensions (the client credentials grant, SEP-1046; enterprise-managed authorization, SEP-990) and servers of the
 * 2025-03-26 authorization spec. Run at the 2025-11-25 wire with --force, since no spec version selects them.
 */
const AUTH_BEYOND = [
  "client-credentials-basic",
  "client-credentials-jwt",
  "enterprise-managed-authorization",
  "2025-03-26-oauth-metadata-backcompat",
  "2025-03-26-oauth-endpoint-fallback",
];

const CLIENT_RUNS = [
  ...["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"].map((scenario) => ({ scenario, version: "2025-11-25" })),
  ...[
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
  ].map((scenario) => ({
    scenario,
    version: "2026-07-28",
  })),
  ...Object.entries(AUTH_SCENARIOS).flatMap(([version, names]) => names.map((name) => ({ scenario: `auth/${name}`, version }))),
  ...AUTH_BEYOND.map((name) => ({ scenario: `auth/${name}`, version: "2025-11-25", force: true })),
];
const SCENARIO_TIMEOUT_MS = 20_000;

const flags = new Set(process.argv.slice(2));
const UPDATE = flags.has("--update-baselines");
const VERBOSE = flags.has("--verbose");
const ONLY = process.argv
  .find((arg) => arg.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",");
const chosen = (name) => !ONLY || ONLY.includes(name);

async function ensureSuite() {
  if (!existsSync(SUITE) || !existsSync(SUITE_NODE)) {
    console.error("conformance: installing the suite (npm ci in test/conformance)");
    const install = await run("npm", ["ci", "--prefix", HERE, "--no-audit", "--no-fund"], { cwd: HERE });
    if (install.code !== 0) throw new Error(`npm ci in ${HERE} failed:\n${install.output}`);
  }
  const version = await run(SUITE_NODE, ["--version"]);
  if (!/^v(2[2-9]|[3-9]\d)\./.test(version.output)) throw new Error(`${SUITE_NODE} should be Node 22 or later, got: ${version.output.trim()}`);
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build gaggle first (npm run build)`);
}

/** gaggle's environment: state in the run's own directory, and no auth token to demand from the suite. */
function gaggleEnv(work) {
  const env = { ...process.env, XDG_STATE_HOME: join(work, "state") };
  delete env.GAGGLE_AUTH_TOKEN;
  return env;
}

async function startFixture(args = []) {
  const fixture = start(process.execPath, [FIXTURE, "--http", "0", ...args]);
  return (await waitForOutput(fixture, /listening on (\S+)/))[1];
}

async function startGaggle(work, name, childLines) {
  const config = join(work, `${name}.toml`);
  writeFileSync(config, gaggleConfig(childLines));
  const check = await run(process.execPath, [CLI, "validate", "--config", config]);
  if (check.code !== 0) throw new Error(`gaggle rejects the generated config ${config}:\n${check.output}`);
  const gaggle = start(process.execPath, [CLI, "--http", "127.0.0.1:0", "--config", config], { env: gaggleEnv(work) });
  return (await waitForOutput(gaggle, /serving MCP at (\S+)/))[1];
}

// "auto" reaches the fixture (which speaks both eras) in 2026-07-28 over either transport; held to 2025-11-25,
// it shows what gaggle bridges for a client of the other era.
const LEGACY = 'protocol = "2025-11-25"';
const TARGETS = [
  { name: "direct", start: () => startFixture() },
  {
    name: "gaggle-http-child",
    start: async (work) => startGaggle(work, "gaggle-http-child", ['type = "http"', `url = ${JSON.stringify(await startFixture())}`]),
  },
  {
    name: "gaggle-stdio-child",
    start: (work) => startGaggle(work, "gaggle-stdio-child", ['command = "node"', `args = [${JSON.stringify(FIXTURE)}]`]),
  },
  {
    name: "gaggle-legacy-http-child",
    start: async (work) => startGaggle(work, "gaggle-legacy-http-child", ['type = "http"', `url = ${JSON.stringify(await startFixture())}`, LEGACY]),
  },
  {
    name: "gaggle-both-eras-http-child",
    requirements: ["2025-11-25"],
    start: async (work) =>
      startGaggle(work, "gaggle-both-eras-http-child", ['type = "http"', `url = ${JSON.stringify(await startFixture(["--modern-cannot-ask"]))}`]),
  },
  {
    name: "gaggle-legacy-stdio-child",
    start: (work) => startGaggle(work, "gaggle-legacy-stdio-child", ['command = "node"', `args = [${JSON.stringify(FIXTURE)}]`, LEGACY]),
  },
];

/** One invocation of the suite; its output is kept next to its results. */
async function suite(work, label, args) {
  const outcome = await run(SUITE_NODE, [SUITE, ...args, "--timeout", String(SCENARIO_TIMEOUT_MS)], { cwd: work });
  writeFileSync(join(work, `${label}.log`), outcome.output);
  return outcome;
}

const baselineFile = (label) => join(EXPECTED, `${label}.yml`);
const baselineArgs = (label) => (UPDATE ? [] : ["--expected-failures", baselineFile(label)]);

async function serverRuns(work, target, scored) {
  const url = await target.start(work);
  const results = [];
  for (const requirements of target.requirements ?? REQUIREMENTS) {
    const label = `${target.name}-${requirements}`;
    const out = join(work, label);
    const { code, output } = await suite(work, label, ["server", "--url", url, "--requirements", requirements, "-o", out, ...baselineArgs(label)]);
    const checks = readChecks(out);
    const scenarios = scored[requirements].server;
    results.push({
      label,
      target: target.name,
      requirements,
      leg: "server",
      code,
      output,
      scored: scenarios.length,
      totals: tally(checks, scenarios, "server"),
      problems: problems(checks, scenarios),
    });
  }
  return results;
}

const shellQuote = (text) => `'${text.replaceAll("'", "'\\''")}'`;

/**
 * Suite runs at once: each server target has its own fixture and gaggle, each client scenario its own mock server,
 * gaggle and state folder, so none shares anything with another; the suite and the processes it starts keep two
 * cores busy at about this many.
 */
const PARALLEL = 4;

/** `work` over `items`, at most `limit` at once; the results in the items' order. */
async function inPool(items, limit, work) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

const clientLabel = (requirements) => `gaggle-client-${requirements}`;

/** One client scenario, with gaggle as the client; its checks land in its requirement set's output folder. */
function clientRun(work, { scenario, version, force }) {
  const label = clientLabel(version);
  const args = [
    "client",
    ...(force ? ["--force"] : []),
    "--command",
    `${shellQuote(process.execPath)} ${shellQuote(CLIENT)}`,
    "--scenario",
    scenario,
    "--spec-version",
    version,
    "-o",
    join(work, label),
  ];
  return suite(work, `${label}-${scenario.replaceAll("/", "-")}`, [...args, ...baselineArgs(label)]);
}

/** The client scenarios' outcomes (in CLIENT_RUNS' order), one result for each requirement set. */
function clientResults(work, scored, outcomes) {
  return REQUIREMENTS.map((requirements) => {
    const label = clientLabel(requirements);
    const mine = CLIENT_RUNS.flatMap((entry, at) => (entry.version === requirements ? [{ entry, outcome: outcomes[at] }] : []));
    const code = mine.find(({ outcome }) => outcome.code !== 0)?.outcome.code ?? 0;
    const output = mine.map(({ outcome }) => outcome.output).join("");
    const checks = readChecks(join(work, label));
    const scenarios = mine.map(({ entry }) => entry.scenario);
    return {
      label,
      target: "gaggle-client",
      requirements,
      leg: "client",
      code,
      output,
      scored: scored[requirements].client.length,
      totals: tally(checks, scenarios, "client"),
      problems: problems(checks, scenarios),
    };
  });
}

/** The suite's own account of why a run disagrees with its baseline. */
function baselineVerdict(output) {
  const lines = output.split("\n");
  const at = lines.findIndex((line) => /Unexpected failures|Stale baseline entries|Invalid expected-failures|Error/.test(line));
  return at === -1 ? lines.slice(-15) : lines.slice(at).filter((line) => line.trim() !== "");
}

function printTable(results) {
  const rows = results.map(({ target, requirements, leg, scored, totals, code }) => [
    target,
    requirements,
    `${totals.passed}/${totals.scenarios}${leg === "client" ? ` (of ${scored} scored)` : ""}`,
    `${totals.checksPassed}/${totals.checks}`,
    String(totals.warnings),
    UPDATE ? "updated" : code === 0 ? `ok (${totals.failing.length} expected)` : "FAILED",
  ]);
  const header = ["target", "requirements", "scored scenarios", "scored checks", "warnings", "baseline"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const format = (row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]))
      .join("  ")
      .trimEnd();
  console.log(["", format(header), format(widths.map((width) => "-".repeat(width))), ...rows.map(format)].join("\n"));
}

function printProblems(results) {
  for (const result of results) {
    const disagrees = !UPDATE && result.code !== 0;
    if (disagrees) console.log(`\n${result.label}: disagrees with ${baselineFile(result.label)}\n  ${baselineVerdict(result.output).join("\n  ")}`);
    if ((VERBOSE || disagrees) && result.problems.length > 0) {
      console.log(`\n${result.label}: failing scored checks`);
      for (const { scenario, status, id, message } of result.problems)
        console.log(`  ${scenario}  ${status} ${id}: ${message.replace(/\s+/g, " ").slice(0, 240)}`);
    }
  }
}

function updateBaselines(results) {
  mkdirSync(EXPECTED, { recursive: true });
  for (const { label, target, requirements, leg, totals } of results) {
    const what =
      leg === "client"
        ? `conformance client scenarios (${requirements}) with gaggle as the client`
        : `conformance server --requirements ${requirements} against ${target}`;
    writeBaseline(baselineFile(label), { leg, title: `Expected failures: ${what}.`, scenarios: totals.failing });
  }
  console.log(`\nbaselines written to ${EXPECTED}`);
}

/** The run's scratch directory: configs, the suite's output and logs. */
let work;

async function main() {
  const began = Date.now();
  await ensureSuite();
  work = mkdtempSync(join(tmpdir(), "gaggle-conformance-"));
  // Every gaggle of the run, each with a state folder of its own, starts from one code cache (see cli/code-cache.ts),
  // and every run of the suite from Node 22's own (Node 20, gaggle's, ignores it).
  process.env.GAGGLE_CODE_CACHE = join(work, "code-cache");
  process.env.NODE_COMPILE_CACHE = join(work, "node-compile-cache");
  const scored = Object.fromEntries(REQUIREMENTS.map((requirements) => [requirements, scoredScenarios(SUITE_DIR, requirements)]));
  const results = [];
  try {
    // The server targets first: each runs the suite twice in a row, the longest of the jobs.
    const targets = TARGETS.filter((target) => chosen(target.name));
    const clients = chosen("gaggle-client") ? CLIENT_RUNS : [];
    const jobs = [...targets.map((target) => () => serverRuns(work, target, scored)), ...clients.map((entry) => () => clientRun(work, entry))];
    const outcomes = await inPool(jobs, PARALLEL, (job) => job());
    results.push(...outcomes.slice(0, targets.length).flat());
    if (clients.length > 0) results.push(...clientResults(work, scored, outcomes.slice(targets.length)));
  } finally {
    await stopAll();
  }
  printTable(results);
  printProblems(results);
  if (UPDATE) updateBaselines(results);
  const failed = !UPDATE && results.some((result) => result.code !== 0);
  if (failed || flags.has("--keep")) console.log(`\nsuite output kept in ${work}`);
  else rmSync(work, { recursive: true, force: true });
  console.log(`\nconformance: ${failed ? "FAILED" : "ok"} in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  return failed ? 1 : 0;
}

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    console.error(`\nconformance: ${signal}, stopping every process started${work ? `; partial output in ${work}` : ""}`);
    void stopAll(1000).finally(() => process.exit(130));
  });
}

main().then(
  (code) => process.exit(code),
  async (error) => {
    console.error(`conformance: ${error?.stack ?? error}${work ? `\npartial output in ${work}` : ""}`);
    await stopAll();
    process.exit(1);
  },
);
