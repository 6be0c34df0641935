// Owns the third baseline hop: the least gateway, which does what gaggle's call path must do for a tools/call and
// nothing more. It parses each message once in either direction (a child's malformed line never reaches the client),
// routes a call by its name (`CHILD__TOOL`, or execute_child_tool's `server_id` and `tool_name`), checks its
// arguments against the tool's input schema (ajv, compiled once from the child's tools/list), gives it an id of its
// own in a table of requests in flight with a deadline (one timer sweeps them), counts it against the child's
// concurrency, writes the request for the child with only its params serialized, and writes the child's answer with
// the client's id spliced into the line. It has no sessions, principals, queues, logs, metrics, retries, restarts,
// cancellation or notifications of its own: what gaggle costs beyond it is gaggle's structure, and what it costs
// beyond the bare relay is the least any gateway that checks and routes calls pays.
// Usage: node bench/least-gateway.mjs CHILD COMMAND [ARGS...]. It exits with its child; closing its stdin closes the child's.
import { spawnChild } from "./hop-spawn.mjs";
import { Ajv } from "ajv";
import { eachLine } from "./lines.mjs";

const [childName, command, ...args] = process.argv.slice(2);
if (command === undefined) {
  process.stderr.write("usage: node bench/least-gateway.mjs CHILD COMMAND [ARGS...]\n");
  process.exit(2);
}
const PREFIX = `${childName}__`;
const TIMEOUT_MS = 60_000;
const CONCURRENCY = 64;
const LIST_ID = "least-list";

const child = spawnChild(command, args);
const ajv = new Ajv({ strict: false });
/** Each tool's argument check, once the child's tools/list has answered. */
let validators;
/** Calls that came before the list answered. */
const held = [];
/** Requests at the child by their id there: the client's id, the deadline, whether it holds a place. */
const pending = new Map();
let lastId = 0;
let inside = 0;
/** Calls waiting for a place at the child, oldest first. */
const waiting = [];

function writeClient(text) {
  process.stdout.write(`${text}\n`);
}

function answerError(id, code, message) {
  writeClient(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }));
}

function forward(clientId, method, params, holdsPlace) {
  const id = `least-${++lastId}`;
  pending.set(id, { clientId, deadline: Date.now() + TIMEOUT_MS, holdsPlace });
  const tail = params === undefined ? "}" : `,"params":${JSON.stringify(params)}}`;
  child.stdin.write(`{"jsonrpc":"2.0","id":"${id}","method":${JSON.stringify(method)}${tail}\n`);
}

/** The child's tool a call names, and its arguments: proxy mode's `CHILD__TOOL`, or meta mode's execute_child_tool. */
function target(params) {
  if (params?.name === "execute_child_tool") {
    const meta = params.arguments ?? {};
    return meta.server_id === childName ? { tool: meta.tool_name, args: meta.arguments ?? {} } : undefined;
  }
  return typeof params?.name === "string" && params.name.startsWith(PREFIX)
    ? { tool: params.name.slice(PREFIX.length), args: params.arguments ?? {} }
    : undefined;
}

function call(message) {
  if (validators === undefined) return void held.push(message);
  const found = target(message.params);
  const validate = found && validators.get(found.tool);
  if (!validate) return answerError(message.id, -32602, `unknown tool: ${message.params?.name}`);
  if (!validate(found.args)) return answerError(message.id, -32602, `invalid arguments: ${ajv.errorsText(validate.errors)}`);
  const params = { name: found.tool, arguments: found.args };
  if (message.params._meta !== undefined) params._meta = message.params._meta;
  if (inside >= CONCURRENCY) return void waiting.push({ clientId: message.id, params });
  inside++;
  forward(message.id, "tools/call", params, true);
}

/** A call's place at the child is free: the oldest waiting call takes it. */
function leave() {
  inside--;
  const next = waiting.shift();
  if (next === undefined) return;
  inside++;
  forward(next.clientId, "tools/call", next.params, true);
}

function fromClient(text) {
  let message;
  try {
    message = JSON.parse(text);
  } catch {
    return answerError(null, -32700, "parse error");
  }
  if (message.id === undefined) {
    child.stdin.write(`${text}\n`);
    if (message.method === "notifications/initialized") child.stdin.write(`{"jsonrpc":"2.0","id":"${LIST_ID}","method":"tools/list"}\n`);
  } else if (message.method === "tools/call") call(message);
  else forward(message.id, message.method, message.params, false);
}

function fromChild(text) {
  let message;
  try {
    message = JSON.parse(text);
  } catch {
    return;
  }
  if (message === null || typeof message !== "object" || message.jsonrpc !== "2.0") return;
  if (message.id === LIST_ID) {
    validators = new Map((message.result?.tools ?? []).map((tool) => [tool.name, ajv.compile(tool.inputSchema)]));
    for (const early of held.splice(0)) call(early);
    return;
  }
  const request = typeof message.id === "string" && ("result" in message || "error" in message) ? pending.get(message.id) : undefined;
  if (request === undefined) return writeClient(text);
  pending.delete(message.id);
  if (request.holdsPlace) leave();
  const token = `"${message.id}"`;
  const at = text.indexOf(token);
  const id = JSON.stringify(request.clientId);
  writeClient(
    at >= 0 && text.indexOf(token, at + token.length) < 0
      ? `${text.slice(0, at)}${id}${text.slice(at + token.length)}`
      : JSON.stringify({ ...message, id: request.clientId }),
  );
}

/** Requests past their deadline are answered with a timeout and forgotten. */
setInterval(() => {
  const now = Date.now();
  for (const [id, request] of pending) {
    if (request.deadline > now) continue;
    pending.delete(id);
    if (request.holdsPlace) leave();
    answerError(request.clientId, -32001, "request timed out");
  }
}, 1000).unref();

eachLine(process.stdin, fromClient).on("end", () => child.stdin.end());
eachLine(child.stdout, fromChild);
child.on("error", (error) => {
  process.stderr.write(`least gateway: cannot start ${command}: ${error.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
