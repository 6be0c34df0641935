// Attack: thousands of mutated config files (chaos/lib/config-mutants.mjs), each read as `gaggle validate` reads it:
// through dist's config loader in this process for all of them, and through `node dist/cli.js validate --config F`
// for a sample. Each must be found valid or invalid (exit 0 or 1, a usage error 2): never an exception other than
// the loader's ConfigError, no other exit code, no stack trace on stderr.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { count, byCount } from "./lib/figures.mjs";
import { baseDocuments, deepProbes, mutant } from "./lib/config-mutants.mjs";
import { GAGGLE_CLI, ROOT, workDir } from "./lib/gaggle.mjs";
import { seeded } from "./lib/random.mjs";

export const title = "mutated config files through gaggle validate";

const SLOW_MS = 2000;
const CLI_TIMEOUT_MS = 20_000;
const STACK = /^\s+at .+:\d+:\d+\)?$/m;

/** What validate makes of a config text, in this process: "valid", "problems" (exit 1), "invalid" (ConfigError) or a crash. */
export async function loaderOutcome() {
  const { validateConfigText, ConfigError } = await import(pathToFileURL(join(ROOT, "dist", "config", "index.js")).href);
  const { configProblems } = await import(pathToFileURL(join(ROOT, "dist", "gateway", "gaggle.js")).href);
  return (text, file, env) => {
    try {
      const config = validateConfigText(text, file, env);
      return { outcome: configProblems(config).length > 0 ? "problems" : "valid" };
    } catch (error) {
      if (error instanceof ConfigError) return { outcome: "invalid" };
      return { outcome: "crash", error };
    }
  };
}

function runValidate(file, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [GAGGLE_CLI, "validate", "--config", file], { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), CLI_TIMEOUT_MS);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

export async function run({ scale }) {
  const total = Math.max(500, Math.round(2500 * scale));
  const sampleEvery = Math.max(1, Math.round(total / Math.max(40, 150 * scale)));
  const r = seeded(6);
  const dir = workDir("config");
  const env = { HOME: dir.path, PATH: process.env.PATH, USER: "chaos" };
  const validate = await loaderOutcome();
  const bases = baseDocuments(ROOT);
  const outcomes = new Map();
  const crashes = new Map();
  const crashSamples = [];
  const slow = [];
  const sample = [];
  const probes = deepProbes();
  for (let i = 0; i < total + probes.length; i++) {
    const { format, text, ops } = i < total ? mutant(r, bases) : probes[i - total];
    const file = join(dir.path, `m${i}.${format}`);
    const started = performance.now();
    const { outcome, error } = validate(text, file, env);
    const ms = performance.now() - started;
    count(outcomes, outcome);
    if (ms > SLOW_MS) slow.push(`${ops.join(" + ")} (${ms.toFixed(0)} ms)`);
    if (error) {
      const where =
        error.stack
          ?.split("\n")
          .find((line) => /^\s+at /.test(line))
          ?.trim() ?? "";
      count(crashes, `${error.name}: ${error.message.slice(0, 60)} ${where}`);
      if (crashSamples.length < 3) crashSamples.push(`${format}, ${ops.join(" + ")}: ${text.slice(0, 80).replaceAll("\n", "\\n")}`);
    }
    if (i % sampleEvery === 0 || i >= total) {
      writeFileSync(file, text);
      sample.push({ file, outcome, ops });
    }
  }
  // The sample through the command line, two at a time.
  const codes = new Map();
  const cliCrashes = [];
  let disagree = 0;
  let next = 0;
  const worker = async () => {
    while (next < sample.length) {
      const { file, outcome, ops } = sample[next++];
      const { code, signal, stderr } = await runValidate(file, env);
      count(codes, signal ? `signal ${signal}` : `exit ${code}`);
      const crashed = signal !== null || ![0, 1, 2].includes(code) || STACK.test(stderr);
      if (crashed) cliCrashes.push(`${ops.join(" + ")}: ${signal ?? `exit ${code}`}, ${stderr.split("\n")[0].slice(0, 100)}`);
      else if ((code === 0) !== (outcome === "valid")) disagree++;
    }
  };
  await Promise.all([worker(), worker()]);
  dir.remove();
  const crashCount = outcomes.get("crash") ?? 0;
  return {
    title,
    figures: [
      ["mutants", `${total}, and ${probes.length} with a value nested 2,000 or 10,000 deep, through the loader in this process`],
      ["outcomes", byCount(outcomes)],
      ["crashes", crashCount === 0 ? 0 : `${crashCount} (${byCount(crashes)})`],
      ...crashSamples.map((text, n) => [`  crash ${n + 1}`, text]),
      ["slower than 2 s", slow.length === 0 ? 0 : `${slow.length}: ${slow.slice(0, 3).join("; ")}`],
      ["through the CLI", `${sample.length} (${byCount(codes)})`],
      ["CLI crashes", cliCrashes.length === 0 ? 0 : `${cliCrashes.length}: ${cliCrashes.slice(0, 3).join("; ")}`],
      ["CLI and loader disagree", disagree],
    ],
    mustBeZero: { crashes: crashCount, "CLI crashes": cliCrashes.length },
  };
}
