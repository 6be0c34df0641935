// Owns reading a callgrind dump by function: the instructions each function executed itself (its self cost), with
// the JIT's code named from the map `node --perf-basic-prof` writes, and the bundle's positions (dist/gaggle.cjs)
// named by their source file and line through the bundle's source map.
import { existsSync, readFileSync } from "node:fs";

/**
 * The map's code ranges, newest last: V8 reuses an address for new code once old code is collected, and the map
 * keeps both, so an address is named by the newest range that holds it.
 */
function perfMap(path) {
  const ranges = readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line, order) => {
      const [start, size] = line.split(" ", 2);
      const name = line.slice(start.length + size.length + 2);
      return { start: parseInt(start, 16), end: parseInt(start, 16) + parseInt(size, 16), order, name };
    })
    .sort((a, b) => a.start - b.start);
  const longest = ranges.reduce((most, range) => Math.max(most, range.end - range.start), 0);
  const named = new Map();
  return (address) => {
    if (named.has(address)) return named.get(address);
    let low = 0;
    let high = ranges.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (ranges[middle].start <= address) low = middle + 1;
      else high = middle;
    }
    let newest;
    for (let i = low - 1; i >= 0 && ranges[i].start > address - longest; i--) {
      const range = ranges[i];
      if (address < range.end && (!newest || range.order > newest.order)) newest = range;
    }
    // V8 marks code it has not optimized: "~" interpreted, "^" Sparkplug's baseline. Kept, so a row says so.
    const name = newest?.name.replace(/^(JS|Eval):\*?/, "");
    named.set(address, name);
    return name;
  };
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/**
 * A source map's positions as `file:line` for `generatedLine:column` (both 1-based), or undefined when it has none.
 * Columns in the source are not read: a function is named by its line.
 */
function sourcePositions(path) {
  if (!existsSync(path)) return () => undefined;
  const map = JSON.parse(readFileSync(path, "utf8"));
  let source = 0;
  let sourceLine = 0;
  const lines = map.mappings.split(";").map((text) => {
    let column = 0;
    return text
      .split(",")
      .filter(Boolean)
      .map((segment) => {
        const fields = [];
        let value = 0;
        let shift = 0;
        for (const char of segment) {
          const digit = BASE64.indexOf(char);
          value += (digit & 31) << shift;
          if (digit & 32) shift += 5;
          else {
            fields.push(value & 1 ? -(value >> 1) : value >> 1);
            value = 0;
            shift = 0;
          }
        }
        column += fields[0];
        if (fields.length > 1) {
          source += fields[1];
          sourceLine += fields[2];
        }
        return { column, source, line: sourceLine };
      });
  });
  return (line, column) => {
    let found;
    for (const segment of lines[line - 1] ?? []) {
      if (segment.column > column - 1) break;
      found = segment;
    }
    return found && `${map.sources[found.source].replace(/^(\.\.\/)+/, "")}:${found.line + 1}`;
  };
}

/**
 * Calls `visit(fn, address, cost)` for each self cost in a dump made with --dump-instr=yes (positions "instr line"):
 * `fn` as callgrind names it (with --separate-callers, the function and its callers joined by "'"), `address` the
 * instruction's. A cost line's address is absolute (0x...), relative to the line before (+N, -N) or the same (*); the
 * cost line after a `calls=` line is the call's inclusive cost, which is the callee's, not the caller's.
 */
function eachSelfCost(dumpPath, visit) {
  const names = new Map();
  const nameOf = (text) => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(text);
    if (!match) return text;
    if (match[2] !== undefined) names.set(match[1], match[2]);
    return names.get(match[1]);
  };
  let fn = "";
  let last = 0;
  let callCost = false;
  for (const line of readFileSync(dumpPath, "utf8").split("\n")) {
    if (line.startsWith("fn=")) fn = nameOf(line.slice(3));
    else if (line.startsWith("cfn=")) nameOf(line.slice(4));
    else if (line.startsWith("calls=")) callCost = true;
    else if (/^[0-9+\-*]/.test(line)) {
      const [position, , cost] = line.split(" ");
      if (position.startsWith("0x")) last = parseInt(position, 16);
      else if (position.startsWith("+")) last += Number(position.slice(1));
      else if (position.startsWith("-")) last -= Number(position.slice(1));
      if (callCost) {
        callCost = false;
        continue;
      }
      visit(fn, last, Number(cost ?? 0));
    }
  }
}

/** Names JIT code by an address in it: the function's name, and for gaggle's bundle its source file and line. */
function jitNamer(mapPath, bundleMapPath) {
  const jitName = perfMap(mapPath);
  const source = sourcePositions(bundleMapPath);
  return (address) => {
    const jit = jitName(address);
    const bundled = jit && /^(.*) \S*dist\/gaggle\.cjs:(\d+):(\d+)$/.exec(jit);
    return `JS ${bundled ? `${bundled[1] || "(anonymous)"} ${source(Number(bundled[2]), Number(bundled[3])) ?? jit}` : (jit ?? "(JIT code)")}`;
  };
}

function perCallRows(costs, calls) {
  return [...costs].map(([name, cost]) => ({ name, perCall: cost / calls })).sort((a, b) => b.perCall - a.perCall);
}

/** The self cost of each function in a dump made with --dump-instr=yes, per call, largest first. */
export function selfCostByFunction(dumpPath, mapPath, bundleMapPath, calls) {
  const jsName = jitNamer(mapPath, bundleMapPath);
  const costs = new Map();
  eachSelfCost(dumpPath, (fn, address, cost) => {
    const own = fn.split("'")[0];
    const name = own.startsWith("0x") ? jsName(address) : own;
    costs.set(name, (costs.get(name) ?? 0) + cost);
  });
  return perCallRows(costs, calls);
}

/**
 * The self cost of the functions whose name matches `pattern` (V8's builtins and runtime, the C++ under them), per
 * call, by the nearest JavaScript function among their callers: what JS code pays for them. Needs a dump made with
 * --separate-callers=N, which names each cost by the function and its N callers; a cost with no JavaScript among
 * them is put under "no JS caller within reach".
 */
export function selfCostByCaller(dumpPath, mapPath, bundleMapPath, calls, pattern) {
  const jsName = jitNamer(mapPath, bundleMapPath);
  const costs = new Map();
  eachSelfCost(dumpPath, (fn, _address, cost) => {
    const [own, ...callers] = fn.split("'");
    if (own.startsWith("0x") || !pattern.test(own)) return;
    const caller = callers.find((name) => name.startsWith("0x"));
    const name = `${own.replace(/\(.*$/, "")} <- ${caller ? jsName(parseInt(caller, 16)) : "no JS caller within reach"}`;
    costs.set(name, (costs.get(name) ?? 0) + cost);
  });
  return perCallRows(costs, calls);
}

/** A cache line: the unit code is fetched in, and what a call's code footprint is counted in. */
const LINE_BYTES = 64;

/** What kind of code a named function is, for the footprint's split. */
function codeKind(name) {
  if (name.startsWith("JS ")) {
    if (/ src\/|bench\/[a-z-]+\.mjs/.test(name)) return "the hop's own JavaScript";
    return / node:/.test(name) ? "Node's JavaScript" : "other JavaScript (generated validators, dependencies)";
  }
  if (name.startsWith("Builtins_")) return "V8's builtins";
  return "C++ and C (V8, Node, libuv, libc)";
}

/**
 * The code the average call runs, in cache lines: every 64-byte line of code that executed at least one instruction
 * per two calls (a line the call path runs each time, or work it causes every few calls, as a scavenge), by kind of
 * code and by function, largest first. On a core that the client, the hop and the child share, each process finds
 * little of its code still in the first-level cache when its turn comes: what a call costs follows how much code it
 * runs more closely than how many instructions. Needs a dump made with --dump-instr=yes.
 */
export function codeFootprint(dumpPath, mapPath, bundleMapPath, calls) {
  const jsName = jitNamer(mapPath, bundleMapPath);
  const lines = new Map();
  eachSelfCost(dumpPath, (fn, address, cost) => {
    const line = Math.floor(address / LINE_BYTES);
    const seen = lines.get(line);
    if (seen) seen.cost += cost;
    else lines.set(line, { cost, fn: fn.split("'")[0], address });
  });
  const byKind = new Map();
  const byFunction = new Map();
  let total = 0;
  for (const { cost, fn, address } of lines.values()) {
    if (cost * 2 < calls) continue;
    const name = fn.startsWith("0x") ? jsName(address) : fn;
    const kind = codeKind(name);
    byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
    byFunction.set(name, (byFunction.get(name) ?? 0) + 1);
    total++;
  }
  const largestFirst = (counts) => [...counts].map(([name, count]) => ({ name, bytes: count * LINE_BYTES })).sort((a, b) => b.bytes - a.bytes);
  return { bytes: total * LINE_BYTES, byKind: largestFirst(byKind), byFunction: largestFirst(byFunction) };
}
