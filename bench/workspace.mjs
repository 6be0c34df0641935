// The workspace child's search and shell, each beside a baseline in the same run: GrepTool (ripgrep and its own
// JavaScript search) against rg run directly, GlobTool against find, both over this project's node_modules and
// through a real gaggle; and a trivial command through the persistent shell against spawning `bash -c` afresh.
// Prints medians in ms and the ratios.
//
//   node bench/workspace.mjs        (npm run bench builds dist/ first)
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Shell } from "../dist/virtual/workspace/shell.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TREE = realpathSync(join(ROOT, "node_modules"));
const SEARCH_RUNS = 5;
const SHELL_RUNS = 200;
const GREP = "createRequire";
const GLOB = "**/*.json";

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value) => `${value.toFixed(2)} ms`;

async function timed(runs, fn) {
  const times = [];
  let last;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    last = await fn();
    times.push(performance.now() - start);
  }
  return { ms: median(times), last };
}

function onPath(command) {
  return spawnSync("sh", ["-c", `command -v ${command}`]).status === 0;
}

async function gaggleWith(settings) {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-bench-workspace-"));
  const config = join(dir, "children_config.toml");
  const off = "[virtual.process]\nenabled = false\n[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n";
  writeFileSync(config, `${off}[virtual.workspace]\nenabled = true\nroots = [${JSON.stringify(TREE)}]\nmax_results = 1000000\n${settings}\n`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, "dist/cli.js"), "--config", config, "--standalone"],
    stderr: "ignore",
  });
  const client = new Client({ name: "bench", version: "0" }, { capabilities: {} });
  await client.connect(transport);
  const call = async (tool, args) => {
    const result = await client.callTool({ name: "execute_child_tool", arguments: { server_id: "workspace", tool_name: tool, arguments: args } });
    if (result.isError) throw new Error(`${tool}: ${result.content[0].text}`);
    return result.content[0].text;
  };
  return { call, close: () => client.close() };
}

const lineCount = (text) => Number(/^(\d+)/.exec(text)?.[1] ?? 0);

console.log(`workspace bench: ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}, over ${TREE}`);
const rows = [];

// ---- GrepTool against rg
const hasRg = onPath("rg");
const rgArgs = ["--no-config", "--no-heading", "--with-filename", "--line-number", "--null", "--color", "never", "--no-require-git", "--", GREP, "."];
const direct = hasRg
  ? await timed(
      SEARCH_RUNS,
      () =>
        execFileSync("rg", rgArgs, { cwd: TREE, maxBuffer: 1 << 28 })
          .toString()
          .split("\n").length - 1,
    )
  : undefined;
for (const engine of ["ripgrep", "JavaScript"]) {
  if (engine === "ripgrep" && !hasRg) {
    console.log("GrepTool with ripgrep: skipped, rg is not on PATH (apt-get install ripgrep)");
    continue;
  }
  const gaggle = await gaggleWith(`ripgrep = ${engine === "ripgrep"}`);
  try {
    await gaggle.call("GrepTool", { pattern: GREP }); // warm: the child's first call, the page cache
    const tool = await timed(SEARCH_RUNS, async () => lineCount(await gaggle.call("GrepTool", { pattern: GREP })));
    rows.push([
      `GrepTool "${GREP}" (${engine}), ${tool.last} lines`,
      tool.ms,
      direct?.ms,
      direct ? `rg directly (${direct.last} lines)` : "rg not on PATH",
    ]);
  } finally {
    await gaggle.close();
  }
}
if (!hasRg) console.log("rg is not on PATH: GrepTool's JavaScript search is shown without a baseline");

// ---- GlobTool against find
{
  const findArgs = [".", "-mindepth", "1", "-name", ".*", "-prune", "-o", "-type", "f", "-name", "*.json", "-print"];
  const find = await timed(
    SEARCH_RUNS,
    () =>
      execFileSync("find", findArgs, { cwd: TREE, maxBuffer: 1 << 28 })
        .toString()
        .split("\n").length - 1,
  );
  const gaggle = await gaggleWith("");
  try {
    await gaggle.call("GlobTool", { pattern: GLOB });
    const tool = await timed(SEARCH_RUNS, async () => lineCount(await gaggle.call("GlobTool", { pattern: GLOB })));
    rows.push([
      `GlobTool "${GLOB}" (stat and sort included), ${tool.last} files`,
      tool.ms,
      find.ms,
      `find directly (${find.last} files, no .gitignore)`,
    ]);
  } finally {
    await gaggle.close();
  }
}

// ---- a trivial command: the persistent shell against bash -c afresh
{
  const fresh = await timed(SHELL_RUNS, () => execFileSync("bash", ["-c", "true"]));
  const shell = await Shell.start({ cwd: TREE, graceMs: 1000 });
  try {
    await shell.run("true", { timeoutMs: 10_000, maxChars: 30_000 });
    const persistent = await timed(SHELL_RUNS, () => shell.run("true", { timeoutMs: 10_000, maxChars: 30_000 }));
    rows.push(["a trivial command (true) in the persistent shell, state carried back", persistent.ms, fresh.ms, "spawning bash -c true afresh"]);
  } finally {
    await shell.stop();
  }
  const gaggle = await gaggleWith("");
  try {
    await gaggle.call("Bash", { command: "true" });
    const through = await timed(SHELL_RUNS, () => gaggle.call("Bash", { command: "true" }));
    rows.push(["the same through gaggle (Bash over MCP stdio)", through.ms, fresh.ms, "spawning bash -c true afresh"]);
  } finally {
    await gaggle.close();
  }
}

for (const [what, value, baseline, against] of rows) {
  const ratio = baseline === undefined ? "" : `, ${(value / baseline).toFixed(2)}x ${against} (${ms(baseline)})`;
  console.log(`${what}: ${ms(value)}${ratio}`);
}
