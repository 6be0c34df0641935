// Owns mutated config files: the example configs (TOML and JSON) with types flipped, keys deleted, renamed,
// duplicated or added (prototype names among them), odd unicode, huge numbers and strings, many servers, deep
// values, and plain text damage (lines dropped, doubled or swapped, cut short, stray characters).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { ODD_TEXT } from "./random.mjs";

const PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__", "isPrototypeOf"];
const NUMBERS = [0, -1, 1, 1.5, -0, 2147483647, 2147483648, 2 ** 53 + 1, 1e21, 1e308, -1e308, Infinity, -Infinity, NaN];

/** The example configs as parsed documents, to mutate. */
export function baseDocuments(root) {
  return {
    toml: parseToml(readFileSync(join(root, "children_config.example.toml"), "utf8")),
    json: JSON.parse(readFileSync(join(root, "children_config.example.json"), "utf8")),
  };
}

function nested(depth, leaf) {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

function someValue(r, maxDepth) {
  return r.pick([
    () =>
      r.pick([
        "",
        "x",
        "node",
        "${HOME}",
        "${UNSET_CHAOS_VAR}",
        "${UNSET_CHAOS_VAR:-d}",
        "${",
        "~",
        "~/x",
        "/",
        "../../..",
        "http://[::1",
        "https://x",
      ]),
    () => r.pick(ODD_TEXT).repeat(1 + r.int(3)),
    () => "s".repeat(r.pick([1000, 100_000])),
    () => r.pick(NUMBERS),
    () => r.pick([true, false]),
    () => [],
    () => [r.pick(["a", "*", "npm *"]), r.pick(NUMBERS)],
    () => ({}),
    () => ({ [r.pick(["a", "allow", "deny", ...PROTOTYPE_KEYS])]: r.pick(["x", 1, true]) }),
    () => new Date(r.pick([0, -1e15, 8.64e15])),
    () => nested(1 + r.int(Math.min(maxDepth, 50)), "leaf"),
  ])();
}

/** Every [holder, key] pair in the document: where a mutation can land. */
function places(doc) {
  const found = [];
  const walk = (value) => {
    if (typeof value !== "object" || value === null || value instanceof Date) return;
    for (const key of Object.keys(value)) {
      found.push([value, key]);
      walk(value[key]);
    }
  };
  walk(doc);
  return found;
}

const STRUCTURAL = {
  "flip a type": (r, doc, maxDepth) => {
    const [holder, key] = r.pick(places(doc));
    holder[key] = someValue(r, maxDepth);
  },
  "delete a key": (r, doc) => {
    const [holder, key] = r.pick(places(doc));
    if (Array.isArray(holder)) holder.splice(Number(key), 1);
    else delete holder[key];
  },
  "rename a key": (r, doc) => {
    const [holder, key] = r.pick(places(doc).filter(([holder]) => !Array.isArray(holder)));
    const value = holder[key];
    delete holder[key];
    const name = r.pick([
      () => r.pick(PROTOTYPE_KEYS),
      () => key.replace(/_(\w)/g, (_, c) => c.toUpperCase()),
      () => key.toUpperCase(),
      () => `${key}${r.pick(ODD_TEXT)}`,
      () => "",
    ])();
    // An own "__proto__" needs defineProperty: an assignment would set the prototype instead.
    Object.defineProperty(holder, name, { value, enumerable: true, writable: true, configurable: true });
  },
  "add a key": (r, doc, maxDepth) => {
    const tables = places(doc).filter(([holder, key]) => typeof holder[key] === "object" && holder[key] !== null && !Array.isArray(holder[key]));
    const target = tables.length > 0 ? r.pick(tables).reduce((holder, key) => holder[key]) : doc;
    const name = r.pick([...PROTOTYPE_KEYS, "enabled", "type", "url", "timeout_ms", "concurrency", "expose", "unknown_key", r.pick(ODD_TEXT)]);
    Object.defineProperty(target, name, { value: someValue(r, maxDepth), enumerable: true, writable: true, configurable: true });
  },
  "a huge number": (r, doc) => {
    const numbers = places(doc).filter(([holder, key]) => typeof holder[key] === "number" || /_ms$|concurrency|max_/.test(key));
    const [holder, key] = numbers.length > 0 ? r.pick(numbers) : r.pick(places(doc));
    holder[key] = r.pick(NUMBERS);
  },
  "a strange server": (r, doc) => {
    const servers = doc.mcp_servers ?? doc.mcpServers ?? (doc.mcp_servers = {});
    if (typeof servers !== "object" || servers === null) return;
    const name = r.pick(["constructor", "toString", "process", "goose", "a b", "🦆", "-x", "x".repeat(300), "__proto__", "", "x.y"]);
    const copy = structuredClone(Object.values(servers).find((value) => typeof value === "object") ?? { command: "node" });
    Object.defineProperty(servers, name, { value: copy, enumerable: true, writable: true, configurable: true });
  },
  "many servers": (r, doc) => {
    const servers = doc.mcp_servers ?? doc.mcpServers;
    if (typeof servers !== "object" || servers === null) return;
    for (let i = 0; i < r.pick([100, 1000]); i++) servers[`s${i}`] = { command: "node", args: [`${i}.mjs`] };
  },
};

const TEXTUAL = {
  "drop a line": (r, lines) => lines.splice(r.int(lines.length), 1),
  "double a line": (r, lines) => {
    const at = r.int(lines.length);
    lines.splice(at, 0, lines[at]);
  },
  "swap two lines": (r, lines) => {
    const [a, b] = [r.int(lines.length), r.int(lines.length)];
    [lines[a], lines[b]] = [lines[b], lines[a]];
  },
  "cut short": (r, lines) => {
    const at = r.int(lines.length);
    lines[at] = lines[at].slice(0, r.int(lines[at].length + 1));
    lines.length = at + 1;
  },
  "a stray character": (r, lines) => {
    const at = r.int(lines.length);
    const line = lines[at];
    const pos = r.int(line.length + 1);
    lines[at] = line.slice(0, pos) + r.pick([...ODD_TEXT, "=", "[", "]", "{", "}", '"', ",", "#", "'", "\t"]) + line.slice(pos + r.int(2));
  },
  "a number past a double": (r, lines) => {
    const at = lines.findIndex((line) => /\d/.test(line));
    if (at >= 0) lines[at] = lines[at].replace(/\d+/, r.pick(["1e400", "-1e400", "123456789012345678901234567890", "0x7fffffff", "1_000", "01"]));
  },
  "a byte order mark": (r, lines) => (lines[0] = `\ufeff${lines[0]}`),
  "CRLF line ends": (r, lines) => lines.forEach((line, i) => (lines[i] = `${line}\r`)),
};

function serialize(format, doc, indent) {
  if (format === "json") return JSON.stringify(doc, (_, value) => (typeof value === "bigint" ? Number(value) : value), indent);
  try {
    return stringifyToml(doc);
  } catch {
    return undefined;
  }
}

/**
 * Configs with one value nested thousands deep, in both formats and both kinds of nesting: past what a reader
 * that recurses survives.
 */
export function deepProbes() {
  const probes = [];
  for (const depth of [2000, 10_000]) {
    const arrays = `${"[".repeat(depth)}${"]".repeat(depth)}`;
    const tables = (open, close) => `${open.repeat(depth)}1${close.repeat(depth)}`;
    probes.push(
      { format: "json", text: `{"mcpServers":{"a":{"command":"node","args":${arrays}}}}`, ops: [`arrays nested ${depth} deep`] },
      { format: "json", text: `{"mcpServers":{"a":{"command":"node","env":${tables('{"a":', "}")}}}}`, ops: [`objects nested ${depth} deep`] },
      { format: "toml", text: `[mcp_servers.a]\ncommand = "node"\nargs = ${arrays}\n`, ops: [`arrays nested ${depth} deep`] },
      { format: "toml", text: `[mcp_servers.a]\ncommand = "node"\nenv = ${tables("{a=", "}")}\n`, ops: [`inline tables nested ${depth} deep`] },
    );
  }
  return probes;
}

/** The next mutant: { format, text, ops }. `maxDepth` bounds how deep a generated value nests. */
export function mutant(r, bases, { maxDepth = 1000 } = {}) {
  const format = r.pick(["toml", "json"]);
  // A TOML document may be written as JSON and the other way round: both formats take either shape.
  const doc = structuredClone(r.chance(0.8) ? bases[format] : bases[format === "toml" ? "json" : "toml"]);
  const ops = [];
  const structural = Object.keys(STRUCTURAL);
  for (let n = 1 + r.int(3); n > 0; n--) {
    const op = r.pick(structural);
    ops.push(op);
    try {
      STRUCTURAL[op](r, doc, maxDepth);
    } catch {
      // A mutation that found nothing to change leaves the document as it was.
    }
  }
  const deep = r.chance(0.05);
  if (deep) {
    const depth = Math.min(maxDepth, r.pick([50, 300, 1000]));
    ops.push(`nested ${depth} deep`);
    doc.gateway = { ...(typeof doc.gateway === "object" ? doc.gateway : {}), deep: nested(depth, 1) };
  }
  // Indented JSON of a deep value grows with the square of its depth.
  const indent = deep ? undefined : 2;
  let text = serialize(format, doc, indent);
  let written = format;
  if (text === undefined) [written, text] = ["json", serialize("json", doc, indent)];
  if (r.chance(0.4)) {
    const lines = text.split("\n");
    const op = r.pick(Object.keys(TEXTUAL));
    ops.push(op);
    TEXTUAL[op](r, lines);
    text = lines.join("\n");
  }
  return { format: written, text, ops };
}
