// Owns the call-path listing: the source files and functions of gaggle that one tools/call runs, through proxy mode
// over stdio to a stdio child, read from V8's precise coverage of gaggle's process.
//
//   node bench/callpath.mjs [--json PATH]   (after npm run build)
//
// gaggle runs unbundled (dist/cli/main.js, tsc's output, one file per source file) with bench/callpath-probe.mjs
// preloaded, and is read two ways for one call made after warm-up calls:
// - the path: the stacks (async frames included) at the four points where the call's bytes enter and leave gaggle:
//   the parse of the client's request, the write to the child's stdin, the child's answer taken as its line (checked,
//   not parsed: ChildWire.receiveLine), the write of the answer to the client; the files are those of their frames;
// - everything run: V8's precise coverage, taken (and so started again) before the call and after it; every
//   function that ran in between ran for that call. A window as long with no call is taken too: what runs without
//   a call (timers) is shown apart and left out.
import { existsSync, readFileSync } from "node:fs";
import { writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { setTimeout as delay } from "node:timers/promises";
import * as procs from "./procs.mjs";

const { values } = parseArgs({ options: { json: { type: "string" }, help: { type: "boolean", short: "h" } } });
if (values.help) {
  process.stdout.write("usage: node bench/callpath.mjs [--json PATH]   (after npm run build)\n");
  process.exit(0);
}
const MAIN = join(procs.ROOT, "dist", "cli", "main.js");
const PROBE = join(procs.ROOT, "bench", "callpath-probe.mjs");
const DIST = join(procs.ROOT, "dist");
const WARM_UP_CALLS = 300;
/** What a call may still run after its answer reached the client (a finally, a timer it re-arms). */
const SETTLE_MS = 100;

const MARKER = "callpath-marker";

async function main() {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing; run npm run build`);
  const dir = procs.makeTempDir();
  const out = join(dir, "coverage-");
  // Proxy mode, built-in children off: the client calls the child's tool under its exposed name.
  const config = procs.writeConfig(dir, "proxy.toml", { everything: [] }, { expose: "tools", builtIns: false });
  const endpoint = await procs.Endpoint.start("gaggle", process.execPath, ["--import", PROBE, MAIN, "--config", config], {
    GAGGLE_CALLPATH_OUT: out,
    GAGGLE_CALLPATH_MARKER: MARKER,
  });
  try {
    // A tools/list waits for the child to start for gateway.list_wait_ms, and shows its tools once it has.
    for (let tries = 0; !(await endpoint.client.listTools()).tools.some((tool) => tool.name === "everything__echo"); tries++) {
      if (tries > 100) throw new Error("tools/list does not show everything__echo");
      await delay(100);
    }
    for (let i = 0; i < WARM_UP_CALLS; i++) await echo(endpoint, `path ${i}`);
    let taken = 0;
    const take = async () => {
      process.kill(endpoint.pid, "SIGUSR2");
      const file = `${out}${++taken}`;
      for (let waited = 0; !existsSync(file); waited += 10) {
        if (waited > 10_000) throw new Error("the probe wrote nothing; is bench/callpath-probe.mjs preloaded?");
        await delay(10);
      }
      await delay(20);
      return JSON.parse(readFileSync(file, "utf8"));
    };
    await take();
    await delay(SETTLE_MS);
    const idle = ranInGaggle((await take()).coverage);
    await echo(endpoint, MARKER);
    await delay(SETTLE_MS);
    const { coverage, stacks } = await take();
    const idleFns = new Set(idle.flatMap(({ file, functions }) => functions.map((fn) => `${file}:${fn.name}`)));
    const ran = ranInGaggle(coverage)
      .map(({ file, functions }) => ({ file, functions: functions.filter((fn) => !idleFns.has(`${file}:${fn.name}`)) }))
      .filter(({ functions }) => functions.length > 0);
    const order = stacks.map(({ at }) => at).join(", ");
    if (order !== "parse, write, take, write")
      throw new Error(`expected the call to be parsed, written, its answer taken unparsed, written; found ${order}`);
    return { stacks: stacks.map(({ stack }) => framesInGaggle(stack)), ran, idle };
  } finally {
    await endpoint.close();
    procs.removeDir(dir);
  }
}

async function echo(endpoint, message) {
  const result = await endpoint.client.callTool({ name: "everything__echo", arguments: { message } });
  if (result.isError || result.content?.[0]?.text !== `Echo: ${message}`) throw new Error(`unexpected echo result: ${JSON.stringify(result)}`);
}

/** A dist/ path as the source file it was built from. */
const sourceOf = (path) => `src/${relative(DIST, path).replace(/\.js$/, ".ts")}`;

/** gaggle's own files and the functions that ran in each. */
function ranInGaggle(coverage) {
  return coverage
    .map(({ url, functions }) => ({ path: fileURLToPath(url), functions }))
    .filter(({ path }) => path.startsWith(DIST + "/"))
    .map(({ path, functions }) => ({ file: sourceOf(path), functions }))
    .sort((a, b) => a.file.localeCompare(b.file));
}

/** The frames of a stack that are gaggle's, outermost first: `file function`. */
function framesInGaggle(stack) {
  const frames = [];
  for (const line of stack.split("\n").slice(1)) {
    const match = /^\s*at (?:async )?(?:(.*?) \()?(file:\/\/[^)]+?):\d+:\d+\)?$/.exec(line);
    if (!match) continue;
    const path = fileURLToPath(match[2]);
    if (path.startsWith(DIST + "/")) frames.push({ file: sourceOf(path), fn: match[1] ?? "(anonymous)" });
  }
  return frames.reverse();
}

const result = await main();
const pathFiles = [...new Set(result.stacks.flat().map((frame) => frame.file))];
const ranFunctions = result.ran.reduce((sum, { functions }) => sum + functions.length, 0);
const lines = [
  "one tools/call through proxy mode over stdio (everything__echo on a stdio child, after warm-up calls)",
  "",
  `the path: ${pathFiles.length} source files, on the stacks where the call enters and leaves gaggle`,
  ...["the request read", "the request written to the child", "the answer read", "the answer written to the client"].flatMap((where, at) => [
    `  ${where}: ${result.stacks[at].map((frame) => `${frame.file.replace(/^src\//, "")} ${frame.fn}`).join(" > ")}`,
  ]),
  ...pathFiles.map((file) => `  ${file}`),
  "",
  `everything run for the call: ${result.ran.length} source files, ${ranFunctions} functions`,
  ...result.ran.map(({ file, functions }) => `  ${file.padEnd(44)} ${functions.map((fn) => fn.name).join(", ")}`),
  `ran without a call in a window as long (left out above): ${result.idle.map(({ file }) => file).join(", ") || "nothing"}`,
];
process.stdout.write(lines.join("\n") + "\n");
if (values.json) writeFileSync(values.json, JSON.stringify({ pathFiles, ...result }, null, 2) + "\n");
