// JSON-RPC 2.0 messages as the lines of a stdio stream: one parse and a structural check per message.
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { LineSplitter } from "./line-splitter.js";
import { describeJson, isObject } from "./json.js";

/** JSON-RPC's own codes for a message that cannot be read. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/**
 * Why a line is not a JSON-RPC message. `id` is set when the line was a request whose id could still be read;
 * `answerable` is false for a broken response, which JSON-RPC never answers.
 */
export class MessageDecodeError extends Error {
  constructor(
    readonly code: typeof PARSE_ERROR | typeof INVALID_REQUEST,
    message: string,
    readonly id?: RequestId,
    readonly answerable = true,
  ) {
    super(message);
    this.name = "MessageDecodeError";
  }
}

/**
 * Parses one line into a JSON-RPC message and checks the shape that routing relies on: a request or
 * notification has a string `method`, object `params` if any, and a string or integer `id` if any; a response
 * has an `id` and exactly one of an object `result` or an `error` with an integer `code` and a string
 * `message`. Fields beyond those are kept as they came, so nothing the sender wrote is lost on the way.
 */
export function decodeMessage(line: string): JSONRPCMessage {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new MessageDecodeError(PARSE_ERROR, `not JSON: ${(error as Error).message}`);
  }
  if (!isObject(value)) {
    const what = Array.isArray(value) ? "an array (JSON-RPC batches are not part of MCP)" : `a JSON ${value === null ? "null" : typeof value}`;
    throw new MessageDecodeError(INVALID_REQUEST, `expected a JSON-RPC message object, found ${what}`);
  }
  const message = value;
  const id = isRequestId(message.id) ? message.id : undefined;
  const isResponse = !("method" in message) && ("result" in message || "error" in message);
  const invalid = (problem: string) => new MessageDecodeError(INVALID_REQUEST, problem, "method" in message ? id : undefined, !isResponse);
  if (message.jsonrpc !== "2.0") throw invalid(`"jsonrpc" must be "2.0", found ${describeJson(message.jsonrpc)}`);
  if ("id" in message && id === undefined && !(message.id === null && "error" in message)) {
    throw invalid(`"id" must be a string or an integer, found ${describeJson(message.id)}`);
  }
  if ("method" in message) {
    if (typeof message.method !== "string") throw invalid(`"method" must be a string, found ${describeJson(message.method)}`);
    if ("params" in message && !isObject(message.params)) throw invalid(`"params" must be an object, found ${describeJson(message.params)}`);
    return value as JSONRPCMessage;
  }
  if (!("id" in message)) throw invalid(`a message needs a "method" (request or notification) or an "id" (response)`);
  if ("result" in message === "error" in message) throw invalid(`a response needs exactly one of "result" and "error"`);
  if ("result" in message) {
    if (!isObject(message.result)) throw invalid(`"result" must be an object, found ${describeJson(message.result)}`);
    return value as JSONRPCMessage;
  }
  const error = message.error;
  if (!isObject(error) || !Number.isInteger(error.code) || typeof error.message !== "string") {
    throw invalid(`"error" must be an object with an integer "code" and a string "message", found ${describeJson(error)}`);
  }
  return value as JSONRPCMessage;
}

/** The longest message read from a stdio peer; a longer line is cut, reported as unreadable and skipped. */
const MAX_MESSAGE_CHARS = 64 * 1024 * 1024;

/**
 * Reads a stdio stream of messages: push it the stream's text. A message goes to `onMessage`, a line that is
 * none to `onUnreadable`; blank lines are skipped.
 */
export function messageLines(
  onMessage: (message: JSONRPCMessage) => void,
  onUnreadable: (error: MessageDecodeError, line: string) => void,
): LineSplitter {
  return new LineSplitter(MAX_MESSAGE_CHARS, (line) => readMessageLine(line, onMessage, onUnreadable));
}

function readMessageLine(
  line: string,
  onMessage: (message: JSONRPCMessage) => void,
  onUnreadable: (error: MessageDecodeError, line: string) => void,
): void {
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
  onMessage(message);
}

export function encodeMessage(message: JSONRPCMessage): string {
  return JSON.stringify(message) + "\n";
}

/** The reply a sender gets for a line that could not be taken, so that it is not left waiting. */
export function decodeErrorReply(error: MessageDecodeError): JSONRPCMessage {
  return { jsonrpc: "2.0", id: error.id ?? null, error: { code: error.code, message: error.message } } as unknown as JSONRPCMessage;
}

function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isInteger(value));
}
