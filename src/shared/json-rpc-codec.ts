// JSON-RPC 2.0 messages as the lines of a stdio stream and as HTTP bodies: one parse and a structural check per message.
import { RELATED_TASK_META_KEY, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { LineSplitter } from "./stream-lines.js";
import { describeJson, isObject } from "./json.js";
import { answerText } from "./answer-line.js";
import {
  CLOSE_BRACE,
  codeAt,
  COLON,
  COMMA,
  jsonString,
  jsonValueEnd,
  nestsDeeperThan,
  OPEN_BRACE,
  plainStringEnd,
  skipJsonSpace,
  topLevelNumberText,
} from "./json-text.js";

/** JSON-RPC's own codes for a message that cannot be read. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/**
 * The deepest a message may nest arrays and objects. Deeper, it is refused before anything walks it: JSON.stringify
 * and other recursive code would run out of stack. Real MCP messages, deep tool schemas included, stay well within it:
 * only a message built to nest is refused.
 */
export const MAX_NESTING = 512;

/**
 * Why a line is not a JSON-RPC message. `idText` is the request's id as it was written (JSON text), when the line
 * was a request whose id could still be read; `answerable` is false for a broken response, which JSON-RPC never
 * answers.
 */
export class MessageDecodeError extends Error {
  constructor(
    readonly code: typeof PARSE_ERROR | typeof INVALID_REQUEST,
    message: string,
    readonly idText?: string,
    readonly answerable = true,
  ) {
    super(message);
    this.name = "MessageDecodeError";
  }
}

/**
 * Parses one line into a JSON-RPC message and checks it as the SDK's Protocol will, so that nothing it would drop
 * unanswered gets past: a request or notification has only `jsonrpc`, `method` (a string), `params` (an object, its
 * `_meta` an object if any) and `id` (a string or an integer JSON's numbers hold exactly) if any; a response has an
 * `id` and exactly one of an object `result` or an `error` with an integer `code` and a string `message`. Fields
 * inside `params`, `result` and `error` are kept as they came, so nothing the sender wrote is lost on the way.
 */
export function decodeMessage(line: string): JSONRPCMessage {
  return checkMessage(parseJson(line), line);
}

/**
 * decodeMessage's check of a parsed value. `text` is the value's own JSON text, for its depth and its numbers as
 * written; undefined for a message of a batch, whose depth the batch's text bounds and whose id is named as
 * JSON.parse read it.
 */
function checkMessage(value: unknown, text: string | undefined): JSONRPCMessage {
  if (!isObject(value)) {
    const what = Array.isArray(value) ? "an array (JSON-RPC batches are not part of MCP)" : `a JSON ${value === null ? "null" : typeof value}`;
    throw new MessageDecodeError(INVALID_REQUEST, `expected a JSON-RPC message object, found ${what}`);
  }
  const message = value;
  // First, before anything walks the message (describeJson does).
  if (text !== undefined && nestsDeeperThan(text, MAX_NESTING)) throw invalidMessage(message, text, TOO_DEEP);
  if (message.jsonrpc !== "2.0") throw invalidMessage(message, text, `"jsonrpc" must be "2.0", found ${describeJson(message.jsonrpc)}`);
  if ("id" in message && !isRequestId(message.id) && !(message.id === null && "error" in message))
    throw invalidMessage(message, text, idProblem(message.id, text));
  if ("method" in message) {
    const extra = memberOutside(message, "method", "params");
    if (extra !== undefined) {
      throw invalidMessage(
        message,
        text,
        `unexpected member ${JSON.stringify(extra)}: a request or notification has only "jsonrpc", "id", "method" and "params"`,
      );
    }
    if (typeof message.method !== "string") throw invalidMessage(message, text, `"method" must be a string, found ${describeJson(message.method)}`);
    if ("params" in message && !isObject(message.params))
      throw invalidMessage(message, text, `"params" must be an object, found ${describeJson(message.params)}`);
    const meta = "params" in message ? metaProblem("params", message.params as Record<string, unknown>) : undefined;
    if (meta) throw invalidMessage(message, text, meta);
    return value as JSONRPCMessage;
  }
  if (!("id" in message)) throw invalidMessage(message, text, `a message needs a "method" (request or notification) or an "id" (response)`);
  if ("result" in message === "error" in message) throw invalidMessage(message, text, `a response needs exactly one of "result" and "error"`);
  const extra = memberOutside(message, "result", "error");
  if (extra !== undefined)
    throw invalidMessage(message, text, `unexpected member ${JSON.stringify(extra)}: a response has only "jsonrpc", "id" and "result" or "error"`);
  if ("result" in message) {
    if (!isObject(message.result)) throw invalidMessage(message, text, `"result" must be an object, found ${describeJson(message.result)}`);
    const meta = metaProblem("result", message.result);
    if (meta) throw invalidMessage(message, text, meta);
    return value as JSONRPCMessage;
  }
  const error = message.error;
  if (!isObject(error) || !Number.isInteger(error.code) || typeof error.message !== "string") {
    throw invalidMessage(message, text, `"error" must be an object with an integer "code" and a string "message", found ${describeJson(error)}`);
  }
  return value as JSONRPCMessage;
}

/** Why `message` is refused: answerable, with its id as written, unless it is a response (JSON-RPC answers none). */
function invalidMessage(message: Record<string, unknown>, text: string | undefined, problem: string): MessageDecodeError {
  const isResponse = !("method" in message) && ("result" in message || "error" in message);
  return new MessageDecodeError(INVALID_REQUEST, problem, "method" in message ? idTextOf(message.id, text) : undefined, !isResponse);
}

/**
 * A Streamable HTTP POST body: one message, or a batch of them (the SDK's transport still takes batches, from clients
 * of 2025-03-26), each checked as a line of its own would be.
 */
export function decodeBody(text: string): JSONRPCMessage | JSONRPCMessage[] {
  if (!/^\s*\[/.test(text)) return decodeMessage(text);
  const batch = parseJson(text) as unknown[];
  if (nestsDeeperThan(text, MAX_NESTING)) throw new MessageDecodeError(INVALID_REQUEST, TOO_DEEP);
  if (batch.length === 0) throw new MessageDecodeError(INVALID_REQUEST, "an empty batch: a batch holds one message or more");
  return batch.map((message) => checkMessage(message, undefined));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new MessageDecodeError(PARSE_ERROR, `not JSON: ${(error as Error).message}`);
  }
}

const TOO_DEEP = `nested more than ${MAX_NESTING} deep: gaggle reads arrays and objects up to ${MAX_NESTING} levels`;
/**
 * The first member of `message` other than "jsonrpc", "id" and the two of its kind (`a`, `b`); a loop, not a list of
 * keys made for every message, and comparisons, not a set's lookups: JSON.parse's keys and these names are
 * internalized strings, which compare as one pointer.
 */
function memberOutside(message: Record<string, unknown>, a: string, b: string): string | undefined {
  for (const key in message) if (key !== "jsonrpc" && key !== "id" && key !== a && key !== b) return key;
  return undefined;
}

/** What is wrong with `_meta` in params or a result, as the SDK reads it: an object, its progress token an id. */
function metaProblem(where: "params" | "result", fields: Record<string, unknown>): string | undefined {
  if (!("_meta" in fields)) return undefined;
  const meta = fields._meta;
  if (!isObject(meta)) return `"${where}._meta" must be an object, found ${describeJson(meta)}`;
  if ("progressToken" in meta && !isRequestId(meta.progressToken)) {
    return `"${where}._meta.progressToken" must be a string or an integer, found ${describeJson(meta.progressToken)}`;
  }
  const task = meta[RELATED_TASK_META_KEY];
  if (task !== undefined && !(isObject(task) && typeof task.taskId === "string")) {
    return `"${where}._meta[${JSON.stringify(RELATED_TASK_META_KEY)}]" must be an object with a string "taskId", found ${describeJson(task)}`;
  }
  return undefined;
}

/** An id the SDK takes: a string, or an integer a JSON number holds exactly (JSON.parse rounds one beyond 2^53). */
function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || Number.isSafeInteger(value);
}

/** Why `id` is no id the SDK takes; a number is named as `text` wrote it, not as JSON.parse rounded it. */
function idProblem(id: unknown, text: string | undefined): string {
  const found = typeof id === "number" ? numberText(id, text) : describeJson(id);
  if (Number.isInteger(id)) return `"id" ${found} is an integer beyond 2^53, which JSON-RPC peers do not all read exactly; send it as a string`;
  return `"id" must be a string or an integer, found ${found}`;
}

/** A request's id as its answer must carry it: a number as `text` wrote it, a string; undefined for anything else. */
function idTextOf(id: unknown, text: string | undefined): string | undefined {
  if (typeof id === "string") return JSON.stringify(id);
  if (typeof id === "number") return numberText(id, text);
  return undefined;
}

/** The message's numeric id as `text` wrote it, or as JSON writes the number read. */
function numberText(id: number, text: string | undefined): string {
  return (text === undefined ? undefined : topLevelNumberText(text, "id")) ?? String(id);
}

/** What plainAnswer reads of a plain success answer: its id, and whether its result's "isError" is true. */
export interface PlainAnswer {
  id: string;
  isError: boolean;
}

/**
 * `line` read as a plain success answer, which may be passed on without being parsed: its members exactly "jsonrpc":
 * "2.0", "id" (a string written without escapes) and "result" (an object without a "_meta" member), each once, in any
 * order, and the whole line JSON nested at most MAX_NESTING deep, read as JSON.parse reads it. Such a line decodeMessage
 * takes too, reading the same id and isError. Undefined for any other line, to be decoded as usual, which names its
 * problem if it has one: a member named with an escape, or a result's "_meta", is left to decodeMessage to read.
 */
export function plainAnswer(line: string): PlainAnswer | undefined {
  const answer: PlainAnswer = { id: "", isError: false };
  // The TypeScript SDK's shape (JSON.stringify of { result, jsonrpc, id }), its envelope read by comparisons of whole
  // strings: reading a character at a time costs several times more in a line sliced out of what was read. The id holds
  // no quote, so the last SDK_TAIL in the line is the envelope's.
  if (line.startsWith(SDK_HEAD) && line.endsWith(SDK_END)) {
    const tail = line.lastIndexOf(SDK_TAIL);
    const id = tail + SDK_TAIL.length;
    if (tail > 0 && plainStringEnd(line, id - 1) === line.length - 1 && plainResultEnd(line, SDK_HEAD.length, answer) === tail) {
      answer.id = line.slice(id, -2);
      return answer;
    }
    answer.isError = false;
  }
  let at = skipJsonSpace(line, 0);
  if (codeAt(line, at) !== OPEN_BRACE) return undefined;
  let id = false;
  let version = false;
  let result = false;
  at = skipJsonSpace(line, at + 1);
  for (;;) {
    const key = at;
    const keyEnd = plainStringEnd(line, key);
    if (keyEnd < 0) return undefined;
    at = skipJsonSpace(line, keyEnd);
    if (codeAt(line, at) !== COLON) return undefined;
    at = skipJsonSpace(line, at + 1);
    if (isKey(line, key, keyEnd, "result") && !result) {
      result = true;
      at = plainResultEnd(line, at, answer);
    } else if (isKey(line, key, keyEnd, "id") && !id) {
      const end = plainStringEnd(line, at);
      if (end >= 0) answer.id = line.slice(at + 1, end - 1);
      id = true;
      at = end;
    } else if (isKey(line, key, keyEnd, "jsonrpc") && !version && line.startsWith(VERSION_TEXT, at)) {
      version = true;
      at += VERSION_TEXT.length;
    } else return undefined;
    if (at < 0) return undefined;
    at = skipJsonSpace(line, at);
    const next = codeAt(line, at);
    if (next === CLOSE_BRACE) break;
    if (next !== COMMA) return undefined;
    at = skipJsonSpace(line, at + 1);
  }
  return version && result && id && skipJsonSpace(line, at + 1) === line.length ? answer : undefined;
}

const VERSION_TEXT = '"2.0"';
const SDK_HEAD = '{"result":';
const SDK_TAIL = ',"jsonrpc":"2.0","id":"';
const SDK_END = '"}';

/** Whether the plain string from `start` to `end` (its quotes included) is `name`. */
function isKey(line: string, start: number, end: number, name: string): boolean {
  return end - start === name.length + 2 && line.startsWith(name, start + 1);
}

/**
 * Where a plain answer's result, the object at `at`, ends; -1 for anything else, or a member named "_meta" or with an
 * escape. Its "isError" (the last, as JSON.parse keeps it) is told to `answer`.
 */
function plainResultEnd(line: string, at: number, answer: PlainAnswer): number {
  if (codeAt(line, at) !== OPEN_BRACE) return -1;
  at = skipJsonSpace(line, at + 1);
  if (codeAt(line, at) === CLOSE_BRACE) return at + 1;
  for (;;) {
    const key = at;
    const keyEnd = plainStringEnd(line, key);
    if (keyEnd < 0 || isKey(line, key, keyEnd, "_meta")) return -1;
    at = skipJsonSpace(line, keyEnd);
    if (codeAt(line, at) !== COLON) return -1;
    const value = skipJsonSpace(line, at + 1);
    if (isKey(line, key, keyEnd, "isError")) answer.isError = line.startsWith("true", value);
    // The message nests one level, the result a second.
    at = jsonValueEnd(line, value, MAX_NESTING - 2);
    if (at < 0) return -1;
    at = skipJsonSpace(line, at);
    const next = codeAt(line, at);
    if (next === CLOSE_BRACE) return at + 1;
    if (next !== COMMA) return -1;
    at = skipJsonSpace(line, at + 1);
  }
}

/** The longest message read from a stdio peer; a longer line is cut, reported as unreadable and skipped. */
const MAX_MESSAGE_CHARS = 64 * 1024 * 1024;

/**
 * Reads a stdio stream of messages: push it the stream's text. A message goes to `onMessage` with its line, a
 * line that is none to `onUnreadable`; blank lines are skipped. `taken`, if given, is offered each line first: a line
 * it takes (returns true for) is neither decoded nor handed on.
 */
export function messageLines(
  onMessage: (message: JSONRPCMessage, line: string) => void,
  onUnreadable: (error: MessageDecodeError, line: string) => void,
  taken?: (line: string) => boolean,
): LineSplitter {
  return new LineSplitter(MAX_MESSAGE_CHARS, (line) => readMessageLine(line, onMessage, onUnreadable, taken));
}

function readMessageLine(
  line: string,
  onMessage: (message: JSONRPCMessage, line: string) => void,
  onUnreadable: (error: MessageDecodeError, line: string) => void,
  taken: ((line: string) => boolean) | undefined,
): void {
  if (taken?.(line)) return;
  // A message starts with "{"; only a line that does not is looked at again for being blank.
  if (line.charCodeAt(0) !== 123 && line.trim() === "") return;
  let message: JSONRPCMessage;
  try {
    message = decodeMessage(line);
  } catch (error) {
    // decodeMessage throws nothing else: JSON.parse's own errors come wrapped.
    onUnreadable(error as MessageDecodeError, line);
    return;
  }
  onMessage(message, line);
}

/** The line of a message; a child's answer passed on with nothing but its id changed is its own line (see keepAnswerLine). */
export function encodeMessage(message: JSONRPCMessage): string {
  return messageText(message) + "\n";
}

/** The method written last, and its JSON text: a wire sends one method (tools/call) over and over. */
let lastMethod = "";
let lastMethodText = '""';

/**
 * A request gaggle sends a child under an id of its own: its text is written member by member, as JSON.stringify
 * writes the object (jsonrpc, id, method, params, in that order), with only the params left to JSON.stringify.
 * `idText` is the id's JSON text, when its maker knows it (gaggle's own ids need no escapes); a copy of the request
 * (a spread) does not carry it.
 */
export class OutgoingRequest {
  readonly jsonrpc = "2.0";
  readonly #idText: string;

  constructor(
    readonly id: string,
    readonly method: string,
    readonly params: Record<string, unknown>,
    idText = jsonString(id),
  ) {
    this.#idText = idText;
  }

  text(): string {
    if (this.method !== lastMethod) {
      lastMethodText = jsonString(this.method);
      lastMethod = this.method;
    }
    return `{"jsonrpc":"2.0","id":${this.#idText},"method":${lastMethodText},"params":${JSON.stringify(this.params)}}`;
  }
}

/** The JSON text of a message, as encodeMessage writes it without the line's end: for an HTTP body or an SSE event. */
export function messageText(message: JSONRPCMessage): string {
  if (message instanceof OutgoingRequest) return message.text();
  if ("result" in message) {
    const text = answerText(message.id, message.result);
    if (text !== undefined) return text;
  }
  return JSON.stringify(message);
}

/**
 * The reply line a sender gets for a line that could not be taken, so that it is not left waiting; written as
 * text, so that its id is the request's own as it was written.
 */
export function decodeErrorLine(error: MessageDecodeError): string {
  return `{"jsonrpc":"2.0","id":${error.idText ?? "null"},"error":${JSON.stringify({ code: error.code, message: error.message })}}\n`;
}
