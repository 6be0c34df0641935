// Owns the probe bench/callpath.mjs preloads into gaggle: V8's precise coverage, and the stack of each JSON.parse, each
// child's answer taken unparsed and each socket write whose text carries a marker (where a call's bytes enter and leave gaggle), taken at each SIGUSR2. A take writes what was counted and captured since the last one
// (and starts both again), as JSON, to the file GAGGLE_CALLPATH_OUT names, followed by the take's number.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { Socket } from "node:net";

const out = process.env.GAGGLE_CALLPATH_OUT;
const marker = process.env.GAGGLE_CALLPATH_MARKER;
Error.stackTraceLimit = Infinity;

// Every parse and every write to a pipe (the child's stdin, gaggle's own stdout) that carries the marker, in order:
// its stack, async frames included.
let stacks = [];
const write = Socket.prototype.write;
Socket.prototype.write = function (chunk, ...rest) {
  if (marker && String(chunk).includes(marker)) stacks.push({ at: "write", stack: new Error("write").stack });
  return write.call(this, chunk, ...rest);
};
const parse = JSON.parse;
JSON.parse = function (text, ...rest) {
  if (marker && typeof text === "string" && text.includes(marker)) stacks.push({ at: "parse", stack: new Error("parse").stack });
  return parse.call(this, text, ...rest);
};
// A child's answer taken as its line, checked but not parsed (ChildWire.receiveLine): the module gaggle loads, patched
// before gaggle loads it.
const { ChildWire } = await import(new URL("../dist/children/wire/child-wire.js", import.meta.url).href);
const receiveLine = ChildWire.prototype.receiveLine;
ChildWire.prototype.receiveLine = function (line) {
  const stack = marker && line.includes(marker) ? new Error("take").stack : undefined;
  const taken = receiveLine.call(this, line);
  if (taken && stack) stacks.push({ at: "take", stack });
  return taken;
};

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
let taken = 0;
process.on("SIGUSR2", async () => {
  const { result } = await session.post("Profiler.takePreciseCoverage");
  const coverage = result
    .filter((script) => script.url.startsWith("file:"))
    .map((script) => ({
      url: script.url,
      functions: script.functions
        .filter((fn) => fn.ranges[0].count > 0)
        .map((fn) => ({ name: fn.functionName || "(anonymous)", count: fn.ranges[0].count })),
    }))
    .filter((script) => script.functions.length > 0);
  writeFileSync(`${out}${++taken}`, JSON.stringify({ coverage, stacks }));
  stacks = [];
});
