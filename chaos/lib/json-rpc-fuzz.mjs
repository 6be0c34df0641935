// Owns the fuzzed JSON-RPC a client may send: generated lines of every kind a careless or hostile client writes
// (wrong types, missing fields, huge or deep values, bad ids, extra members, not JSON at all), and which of them
// deserve an answer. One line per message, never a newline inside; a few are bytes that are not UTF-8.
import { ODD_TEXT } from "./random.mjs";

/** The child every fuzzed call reaches: fixtures/echo.mjs under this name. */
export const FUZZ_CHILD = "echo";

const MODERN = "2026-07-28";
const META_VERSION = "io.modelcontextprotocol/protocolVersion";
const WEIRD = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 2,
  "",
  "x",
  "🦆",
  [],
  [1, "a"],
  {},
  { a: { b: {} } },
  "\u0000\u202e",
  "a".repeat(5000),
];
const ECHO_TOOLS = {
  echo: () => ({ text: "fuzz" }),
  add: () => ({ a: 1, b: 2 }),
  sleep: () => ({ ms: 20 }),
  fail: () => ({ message: "fuzz fails" }),
  env: () => ({ name: "HOME" }),
  pid: () => ({}),
  image: () => ({}),
  progress: () => ({ steps: 2, delay_ms: 5 }),
};

/** A valid request's method and params, drawn from what gaggle serves. */
function validCall(r) {
  const tool = r.pick(Object.keys(ECHO_TOOLS));
  const calls = [
    ["ping", {}],
    ["tools/list", {}],
    ["tools/call", { name: "execute_child_tool", arguments: { server_id: FUZZ_CHILD, tool_name: tool, arguments: ECHO_TOOLS[tool]() } }],
    ["tools/call", { name: "execute_child_tool", arguments: { server_id: FUZZ_CHILD, tool_name: tool, arguments: ECHO_TOOLS[tool](), head: 1 } }],
    ["tools/call", { name: "get_schema", arguments: { server_id: FUZZ_CHILD, tool_name: tool } }],
    ["tools/call", { name: "get_child_status", arguments: { server_id: FUZZ_CHILD } }],
    ["tools/call", { name: "list_registered_children", arguments: {} }],
    ["tools/call", { name: "search_tools", arguments: { query: "echo text", limit: 3 } }],
    ["resources/list", {}],
    ["resources/templates/list", {}],
    ["resources/read", { uri: r.pick(["mcp://server_summary", "mcp://children_servers", "fixture://readme", "fixture://items/7", "nowhere://x"]) }],
    ["prompts/list", {}],
    ["prompts/get", { name: "greet", arguments: { name: "fuzz" } }],
    ["completion/complete", { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "f" } }],
    ["logging/setLevel", { level: r.pick(["debug", "info", "error"]) }],
    ["resources/subscribe", { uri: "fixture://readme" }],
    ["initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "fuzz", version: "0" } }],
  ];
  // Closing the child is rare, so that most calls find it running.
  if (r.chance(0.01)) return ["tools/call", { name: "close_child_session", arguments: { server_id: FUZZ_CHILD } }];
  return r.pick(calls);
}

/** Replaces, deletes or adds one member somewhere in `value` (objects and arrays), in place when it can. */
function mutate(r, value, depth = 0) {
  if (typeof value !== "object" || value === null || depth > 4) return r.pick(WEIRD);
  const keys = Object.keys(value);
  if (keys.length === 0 || r.chance(0.2)) {
    if (Array.isArray(value)) value.push(r.pick(WEIRD));
    else value[r.pick(["extra", "constructor", "toString", "__defineGetter__", "_meta", "cursor", r.pick(ODD_TEXT)])] = r.pick(WEIRD);
    return value;
  }
  const key = r.pick(keys);
  const roll = r.int(3);
  if (roll === 0) delete value[key];
  else if (roll === 1) value[key] = r.pick(WEIRD);
  else value[key] = mutate(r, value[key], depth + 1);
  return value;
}

/** The generator: `next(i)` is the i-th line, a string without a newline or (rarely) a Buffer that is not UTF-8. */
export function fuzzLines(r, { idPrefix = "f" } = {}) {
  const sent = [];
  const freshId = (i) => (r.chance(0.5) ? i + 1000 : `${idPrefix}${i}`);
  const request = (id, [method, params]) => ({ jsonrpc: "2.0", id, method, params });
  const kinds = {
    valid: (i) => JSON.stringify(request(freshId(i), validCall(r))),
    "bad params": (i) => {
      const message = request(freshId(i), validCall(r));
      message.params = r.chance(0.25) ? r.pick(WEIRD) : mutate(r, message.params);
      return JSON.stringify(message);
    },
    "bad envelope": (i) => {
      const message = request(freshId(i), validCall(r));
      const field = r.pick(["jsonrpc", "method", "id", "params"]);
      if (r.chance(0.3)) delete message[field];
      else message[field] = field === "id" ? r.pick([...WEIRD, -0, 2 ** 53 + 2, "a".repeat(20_000)]) : r.pick(WEIRD);
      return JSON.stringify(message);
    },
    "odd numbers": (i) =>
      `{"jsonrpc":"2.0","id":${r.pick(["1e400", "-1e400", "1e-400", "123456789012345678901234567890", "-0", "1.0", `${i + 5000}.000`])},"method":"tools/call","params":{"name":"execute_child_tool","arguments":{"server_id":"${FUZZ_CHILD}","tool_name":"add","arguments":{"a":${r.pick(["1e400", "-0", "9007199254740993"])},"b":1}}}}`,
    "extra members": (i) => {
      const text = JSON.stringify({
        ...request(freshId(i), validCall(r)),
        ...r.pick([{ result: {} }, { error: { code: 1, message: "x" } }, { extra: [1] }, { constructor: {} }]),
      });
      return r.chance(0.5) ? text : `{"__proto__":{"polluted":true},${text.slice(1)}`;
    },
    huge: (i) => {
      const size = r.pick([100_000, 1_000_000, 2_000_000]);
      const [method, params] = validCall(r);
      const big = r.pick([
        () => ({ ...params, big: "h".repeat(size) }),
        () => ({ ...params, many: Array.from({ length: size / 10 }, (_, k) => k) }),
        () => ({ ...params, keys: Object.fromEntries(Array.from({ length: size / 40 }, (_, k) => [`k${k}`, k])) }),
        () => ({ name: "execute_child_tool", arguments: { server_id: FUZZ_CHILD, tool_name: "echo", arguments: { text: "e".repeat(size) } } }),
      ])();
      return JSON.stringify(
        r.chance(0.1) ? request(freshId(i), ["m".repeat(size), {}]) : request(freshId(i), [big.name ? "tools/call" : method, big]),
      );
    },
    deep: (i) => {
      const depth = r.pick([100, 1000, 10_000, 100_000]);
      const [open, close] = r.pick([
        ["[", "]"],
        ['{"a":', "}"],
      ]);
      const where = r.pick([
        (nest) => `{"name":"execute_child_tool","arguments":{"server_id":"${FUZZ_CHILD}","tool_name":"echo","arguments":{"text":${nest}}}}`,
        (nest) => `{"deep":${nest}}`,
        (nest) => `{"_meta":{"${META_VERSION}":"${MODERN}","x":${nest}},"name":"echo"}`,
      ]);
      const nest = `${open.repeat(depth)}1${close.repeat(depth)}`;
      return `{"jsonrpc":"2.0","id":${JSON.stringify(freshId(i))},"method":"tools/call","params":${where(nest)}}`;
    },
    "not JSON": (i) => {
      const valid = JSON.stringify(request(freshId(i), validCall(r)));
      return r.pick([
        () => valid.slice(0, r.int(valid.length)),
        () => `${valid}${r.pick(["}", "x", ",", " {}", valid])}`,
        () => `\ufeff${valid}`,
        () => valid.replaceAll('"', "'"),
        () => `${valid.slice(0, -1)},}`,
        () => `// comment\t${valid}`,
        () => r.pick(["{", "}", "[", "nul", "NaN", "undefined", "{]", '"\\u12"', "\r", " ", "\t\t", "\u0000"]),
        () => Array.from({ length: 1 + r.int(200) }, () => String.fromCharCode(r.pick([r.int(10), 11 + r.int(0xd7ff - 11)]))).join(""),
        () => Buffer.from([0x7b, 0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x82, 0x7d]),
        () => Buffer.concat([Buffer.from(valid.slice(0, 20)), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(valid.slice(20))]),
      ])();
    },
    "not an object": (i) => JSON.stringify(r.pick([[], [request(freshId(i), validCall(r))], [1, 2], 42, "request", null, true, { jsonrpc: "2.0" }])),
    "stray response": (i) =>
      JSON.stringify(
        r.pick([
          { jsonrpc: "2.0", id: i, result: {} },
          { jsonrpc: "2.0", id: `${idPrefix}${i}`, error: { code: -32000, message: "no" } },
          { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse" } },
          { jsonrpc: "2.0", id: 1, result: "not an object" },
          { jsonrpc: "2.0", id: 2, result: {}, error: { code: 1, message: "both" } },
          { jsonrpc: "2.0", id: 3, error: { code: "x" } },
        ]),
      ),
    notification: () => {
      const earlier = sent.length > 0 && r.chance(0.5) ? r.pick(sent) : r.pick(WEIRD);
      return JSON.stringify(
        r.pick([
          { jsonrpc: "2.0", method: "notifications/initialized" },
          { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: earlier, reason: "fuzz" } },
          { jsonrpc: "2.0", method: "notifications/cancelled", params: r.pick(WEIRD) },
          { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: earlier, progress: r.pick(WEIRD) } },
          { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
          { jsonrpc: "2.0", method: `notifications/${r.pick(ODD_TEXT)}`, params: {} },
        ]),
      );
    },
    modern: (i) => {
      const [method, params] = r.chance(0.2) ? ["server/discover", {}] : validCall(r);
      const meta = {
        [META_VERSION]: r.pick([MODERN, MODERN, "2099-01-01", "", 7, null]),
        "io.modelcontextprotocol/clientCapabilities": r.pick([{}, { elicitation: {} }, null, "all"]),
        "io.modelcontextprotocol/clientInfo": r.pick([{ name: "fuzz", version: "0" }, {}, 3]),
        ...(r.chance(0.3) && { "io.modelcontextprotocol/logLevel": r.pick(["debug", "nonsense", 1]) }),
      };
      if (r.chance(0.3)) mutate(r, meta);
      return JSON.stringify(request(freshId(i), [method, { ...(typeof params === "object" && params), _meta: meta }]));
    },
  };
  const names = Object.keys(kinds);
  const weights = [15, 15, 12, 3, 6, 3, 3, 10, 4, 5, 8, 8];
  return {
    kinds: names,
    next(i) {
      const kind = names[r.weighted(weights)];
      const data = kinds[kind](i);
      const id = typeof data === "string" ? answerExpected(data)?.id : undefined;
      if (id !== undefined) sent.push(id);
      return { kind, data };
    },
  };
}

/**
 * The id a line's answer must carry, when it deserves one: a JSON object with a "method" member and a readable id
 * (a string or an integer). Anything else gets no answer, or one with id null.
 */
export function answerExpected(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value) || !("method" in value)) return undefined;
  const { id } = value;
  return typeof id === "string" || Number.isInteger(id) ? { id, method: value.method, params: value.params } : undefined;
}

/**
 * Which expected answers the lines as a whole still owe: a request later cancelled by a notifications/cancelled
 * (never answered, as MCP asks), an id sent twice, and a subscriptions/listen (open until cancelled) owe none.
 */
export function owedAnswers(lines) {
  const owed = new Map();
  const seen = new Set();
  const cancelled = new Set();
  for (const { kind, data } of lines) {
    if (typeof data !== "string") continue;
    let parsed;
    try {
      parsed = JSON.parse(data);
    } catch {
      continue;
    }
    if (parsed?.method === "notifications/cancelled" && parsed.params && typeof parsed.params === "object") cancelled.add(parsed.params.requestId);
    const expected = answerExpected(data);
    if (!expected) continue;
    if (seen.has(expected.id)) owed.delete(expected.id);
    else if (expected.method !== "subscriptions/listen") owed.set(expected.id, { kind, data });
    seen.add(expected.id);
  }
  for (const id of cancelled) owed.delete(id);
  return owed;
}
