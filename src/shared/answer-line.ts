// A child's answer passed on as the line it came in: kept beside its parsed result, and written with the client's id
// spliced in, when nothing but the id changes.
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { CLOSE_BRACE, COLON, COMMA, isJsonSpace, jsonString, OPEN_BRACE, QUOTE } from "./json-text.js";

/** Where a result a child answered in a line of its own keeps that line and the child-side id it carried. */
const ANSWER_LINE = Symbol("gaggle.answerLine");

/** A kept line names the result it was kept for: a copy of the result (a spread) carries the record, and is no match. */
interface KeptLine {
  readonly of: object;
  readonly line: string;
  /** The child-side id, a string JSON writes as it is, in quotes. */
  readonly id: string;
}

/**
 * Keeps the line a child's answer came in (checked, as every line is) beside its parsed result, so that a result
 * passed on to a client with nothing changed but its id is written as that line with the client's id spliced in (over
 * stdio, and in a 2026-07-28 HTTP response): no second parse, no serialization. Whatever changes a result (head/tail,
 * an era's fields) makes a new object, which is serialized as usual; a kept result is never changed in place. The
 * line is held under a symbol of the result itself, which JSON never writes: a WeakMap entry per answer costs several
 * times as much (its set, and the collector's pass over it). `childId`: the id the request that asked for the answer
 * carried, one that needs no escapes in JSON (gaggle's own ids are).
 */
export function keepAnswerLine(result: object, line: string, childId: string): void {
  (result as { [ANSWER_LINE]?: KeptLine })[ANSWER_LINE] = { of: result, line, id: childId };
}

/**
 * A child's result taken as the line it came in, unparsed (see ChildWire.receiveLine), for a caller that writes it to
 * its client as it is: of the result's members it holds only whether "isError" is true, which what observes a call
 * reads, and beside it that line (keepAnswerLine). Written as a message's result it is the line with the client's id
 * spliced in (answerText); JSON.stringify, wherever the splice cannot be made, writes the result the line holds.
 */
export class UnparsedResult {
  constructor(readonly isError: boolean) {}

  toJSON(): unknown {
    return (JSON.parse(keptLine(this)!.line) as { result: unknown }).result;
  }
}

/** The line kept for `result`, when `result` is still the object the child's answer was parsed into. */
function keptLine(result: object): KeptLine | undefined {
  const kept = (result as { [ANSWER_LINE]?: KeptLine })[ANSWER_LINE];
  return kept?.of === result ? kept : undefined;
}

/** The size in bytes of the line a child's answer came in, when `result` is still as the child wrote it (see keepAnswerLine). */
export function answerLineBytes(result: object): number | undefined {
  const kept = keptLine(result);
  return kept && Buffer.byteLength(kept.line);
}

/** How far from the token the envelope's members are looked for. */
const ENVELOPE_CHARS = 64;

/**
 * The child's line with `id` in place of the child-side id, when the child-side id's token is where it can only be
 * the top-level "id": the last member, as JSON.stringify writes a response; else, found exactly once in the line, the
 * last member before a last "jsonrpc", or the first after an opening "jsonrpc" with no "id" after it. Undefined
 * otherwise, and the answer is serialized: the splice never guesses. The envelope is read in place, character by
 * character: no piece of the line is copied to be looked at.
 */
export function answerText(id: RequestId, result: object): string | undefined {
  const kept = keptLine(result);
  if (kept === undefined) return undefined;
  const { line, id: childId } = kept;
  const idText = typeof id === "number" ? String(id) : jsonString(id);
  // The id as the last member, as JSON.stringify writes a response: `"CHILD-ID"}` ends the line. A string right before
  // the top-level close is the last member's value, and of a response's members (checkMessage lets through no others)
  // only "jsonrpc" and "id" hold strings, "jsonrpc" "2.0": unless the id is "2.0" too, the line's own id, the one
  // JSON.parse kept, wherever else the token appears. Nothing more to read. The id is matched with endsWith: V8 inlines
  // startsWith, and a loop of charCodeAt, as loops that look up both strings' layout at every character.
  const close = line.length - 1;
  const tail = close - childId.length - 2;
  if (
    childId !== JSONRPC_VERSION &&
    line.charCodeAt(close) === CLOSE_BRACE &&
    line.charCodeAt(close - 1) === QUOTE &&
    line.endsWith(childId, close - 1) &&
    line.charCodeAt(tail) === QUOTE
  ) {
    return `${line.slice(0, tail)}${idText}}`;
  }
  const token = `"${childId}"`;
  const at = line.indexOf(token);
  if (at < 0 || line.indexOf(token, at + token.length) >= 0) return undefined;
  const end = at + token.length;
  const key = idKeyBefore(line, at);
  const last = key >= 0 && line.length - end <= ENVELOPE_CHARS && closesAfter(line, end);
  const first = !last && key >= 0 && at <= ENVELOPE_CHARS && opensBefore(line, key) && line.indexOf('"id"', end) < 0;
  if (!last && !first) return undefined;
  return `${line.slice(0, at)}${idText}${line.slice(end)}`;
}

const ID_KEY = '"id"';
const JSONRPC_MEMBER = '"jsonrpc"';
const JSONRPC_VERSION = "2.0";
const VERSION = `"${JSONRPC_VERSION}"`;

/** Skips JSON whitespace backwards from `at` (exclusive); the index after the last character that is not, or `stop`. */
function skipSpaceBack(line: string, at: number, stop: number): number {
  while (at > stop && isJsonSpace(line.charCodeAt(at - 1))) at--;
  return at;
}

function skipSpace(line: string, at: number): number {
  while (at < line.length && isJsonSpace(line.charCodeAt(at))) at++;
  return at;
}

/** Where `"id"` begins, when `"id" :` (spaced as JSON allows) ends at `at` after a `{` or `,`, within ENVELOPE_CHARS; else -1. */
function idKeyBefore(line: string, at: number): number {
  const stop = Math.max(0, at - ENVELOPE_CHARS);
  let i = skipSpaceBack(line, at, stop);
  if (i <= stop || line.charCodeAt(i - 1) !== COLON) return -1;
  i = skipSpaceBack(line, i - 1, stop);
  const key = i - ID_KEY.length;
  if (key < stop || !line.startsWith(ID_KEY, key)) return -1;
  const before = skipSpaceBack(line, key, stop);
  if (before <= stop) return -1;
  const char = line.charCodeAt(before - 1);
  return char === OPEN_BRACE || char === COMMA ? key : -1;
}

/** Whether the line from `at` is the object's close, with at most a last `"jsonrpc": "2.0"` member before it. */
function closesAfter(line: string, at: number): boolean {
  let i = skipSpace(line, at);
  if (line.charCodeAt(i) === COMMA) {
    i = skipSpace(line, i + 1);
    if (!line.startsWith(JSONRPC_MEMBER, i)) return false;
    i = skipSpace(line, i + JSONRPC_MEMBER.length);
    if (line.charCodeAt(i) !== COLON) return false;
    i = skipSpace(line, i + 1);
    if (!line.startsWith(VERSION, i)) return false;
    i = skipSpace(line, i + VERSION.length);
  }
  if (line.charCodeAt(i) !== CLOSE_BRACE) return false;
  return skipSpace(line, i + 1) === line.length;
}

/** Whether the line up to `key` is the object's opening, with at most a first `"jsonrpc": "2.0",` member after it. */
function opensBefore(line: string, key: number): boolean {
  let i = skipSpaceBack(line, key, 0);
  if (line.charCodeAt(i - 1) === COMMA) {
    i = skipSpaceBack(line, i - 1, 0) - VERSION.length;
    if (i < 0 || !line.startsWith(VERSION, i)) return false;
    i = skipSpaceBack(line, i, 0);
    if (line.charCodeAt(i - 1) !== COLON) return false;
    i = skipSpaceBack(line, i - 1, 0) - JSONRPC_MEMBER.length;
    if (i < 0 || !line.startsWith(JSONRPC_MEMBER, i)) return false;
    i = skipSpaceBack(line, i, 0);
  }
  return i > 0 && line.charCodeAt(i - 1) === OPEN_BRACE && skipSpaceBack(line, i - 1, 0) === 0;
}
