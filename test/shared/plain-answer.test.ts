// A child's plain success answer read without being parsed: what plainAnswer takes, decodeMessage takes and reads
// alike, and jsonValueEnd reads JSON text as JSON.parse does.
import { describe, expect, it } from "vitest";
import { decodeMessage, MAX_NESTING, plainAnswer } from "../../src/shared/json-rpc-codec.js";
import { jsonValueEnd, skipJsonSpace } from "../../src/shared/json-text.js";
import { isObject } from "../../src/shared/json.js";

/** A small seeded generator (mulberry32): every run tries the same texts. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRING_PARTS = ["a", "Echo: ", "é", "日本", "\n", '"', "\\", "/", "\u0001", "\u2028", "\ud83d\ude00", "\ud800", " ", "gaggle-1"];
const NUMBERS = [0, -0, 1, -1, 0.5, 1e21, 1.5e-7, -123456789, 2 ** 53 + 2, Number.MAX_VALUE];

function value(next: () => number, depth: number): unknown {
  const kind = Math.floor(next() * (depth > 4 ? 4 : 6));
  if (kind === 0) return Array.from({ length: Math.floor(next() * 4) }, () => STRING_PARTS[Math.floor(next() * STRING_PARTS.length)]).join("");
  if (kind === 1) return NUMBERS[Math.floor(next() * NUMBERS.length)];
  if (kind === 2) return [true, false, null][Math.floor(next() * 3)];
  if (kind === 3) return "plain";
  if (kind === 4) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 4); i > 0; i--) object[String(value(next, 5))] = value(next, depth + 1);
  return object;
}

/** The text spaced as JSON allows, where it allows it (outside strings). */
function spaced(text: string, next: () => number): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    out += char;
    if (inString) {
      if (char === "\\") out += text[++i];
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    if (!inString && ",:[]{}".includes(char) && next() < 0.3) out += [" ", "\t", "\r\n", "  "][Math.floor(next() * 4)];
  }
  return out;
}

/** Mutations of valid JSON: a character of JSON's own put in, taken out or put in the place of another. */
const MUTATIONS = ['"', "\\", ",", ":", "[", "]", "{", "}", "0", "1", "-", ".", "e", "+", "u", "x", " ", "\u0000", "\t", "t", "n"];

function mutated(text: string, next: () => number): string {
  const at = Math.floor(next() * (text.length + 1));
  const char = MUTATIONS[Math.floor(next() * MUTATIONS.length)]!;
  const how = Math.floor(next() * 3);
  if (how === 0) return text.slice(0, at) + char + text.slice(at);
  if (how === 1) return text.slice(0, at) + text.slice(at + 1);
  return text.slice(0, at) + char + text.slice(at + 1);
}

/** An object whose member names JSON writes without escapes: a result plainAnswer reads (no "_meta" is generated). */
function isPlainResult(result: unknown): boolean {
  if (typeof result !== "object" || result === null || Array.isArray(result)) return false;
  return Object.keys(result).every((key) => JSON.stringify(key) === `"${key}"`);
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe("jsonValueEnd", () => {
  it("reads a text as a whole JSON value exactly when JSON.parse takes it, over generated and mutated texts", () => {
    const next = random(29);
    let valid = 0;
    for (let i = 0; i < 20_000; i++) {
      const json = JSON.stringify(value(next, 0));
      const text = i % 2 === 0 ? spaced(json, next) : mutated(spaced(json, next), next);
      const end = jsonValueEnd(text, 0, MAX_NESTING);
      const read = end >= 0 && skipJsonSpace(text, end) === text.length;
      if (read !== parses(text)) throw new Error(`jsonValueEnd and JSON.parse disagree on ${JSON.stringify(text)}`);
      if (read) valid++;
    }
    // Both kinds were tried: most generated texts are valid, most mutated ones are not.
    expect(valid).toBeGreaterThan(10_000);
    expect(valid).toBeLessThan(19_000);
  });

  it("refuses what JSON.parse refuses in numbers, strings and literals", () => {
    for (const text of [
      "01",
      "-",
      "1.",
      ".5",
      "1e",
      "1e+",
      "+1",
      "NaN",
      "tru",
      "nul",
      '"\\x"',
      '"\\u12g4"',
      '"a\u0001"',
      '"open',
      "[1,]",
      '{"a":1,}',
      '{"a" 1}',
      "[1 2]",
    ]) {
      expect(parses(text)).toBe(false);
      expect(jsonValueEnd(text, 0, MAX_NESTING)).not.toBe(text.length);
    }
    for (const text of ["0", "-0.5e+10", "1E-2", '"\\u00e9\\n\\/"', '"\ud800"', "[]", "{}", '{"a":[true,false,null]}'])
      expect(jsonValueEnd(text, 0, MAX_NESTING)).toBe(text.length);
  });

  it("refuses a value that nests deeper than it is allowed", () => {
    expect(jsonValueEnd("[[[]]]", 0, 3)).toBe(6);
    expect(jsonValueEnd("[[[]]]", 0, 2)).toBe(-1);
    // A long string is read past its first characters by the regular expression engine: escapes and ends found alike.
    const long = `"${"x".repeat(100)}\\n${"y".repeat(100)}\\u00e9"`;
    expect(jsonValueEnd(long, 0, 1)).toBe(long.length);
    expect(jsonValueEnd(`"${"x".repeat(100)}\u0002"`, 0, 1)).toBe(-1);
    expect(jsonValueEnd(`"${"x".repeat(100)}`, 0, 1)).toBe(-1);
  });
});

describe("plainAnswer", () => {
  it("reads the id of a plain success answer however it is ordered and spaced, as decodeMessage reads it", () => {
    const lines = [
      '{"result":{"content":[{"type":"text","text":"Echo: hi"}]},"jsonrpc":"2.0","id":"gaggle-7"}',
      '{"jsonrpc":"2.0","id":"gaggle-7","result":{"content":[]}}',
      ' { "id" : "gaggle-7" , "result" : { } , "jsonrpc" : "2.0" } ',
      '{"result":{"structuredContent":{"a":[1,2.5,{"b":null}]},"isError":false},"jsonrpc":"2.0","id":"gaggle-7"}',
      // A quoted id, and the SDK's tail, inside the result: the envelope's own are read.
      '{"result":{"text":",\\"jsonrpc\\":\\"2.0\\",\\"id\\":\\"gaggle-1\\"}"},"jsonrpc":"2.0","id":"gaggle-7"}',
    ];
    for (const line of lines) {
      expect(plainAnswer(line)).toEqual({ id: "gaggle-7", isError: false });
      expect(decodeMessage(line)).toMatchObject({ id: "gaggle-7" });
    }
  });

  it("leaves every other line to decodeMessage", () => {
    const lines = [
      '{"jsonrpc":"2.0","id":"gaggle-7","error":{"code":-32602,"message":"bad"}}',
      '{"jsonrpc":"2.0","id":"gaggle-7","method":"ping"}',
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{}}',
      '{"result":{},"jsonrpc":"2.0","id":7}',
      '{"result":{},"jsonrpc":"2.0","id":"gaggle\\u002d7"}',
      '{"result":{},"jsonrpc":"2.0","id":"gaggle-7","extra":1}',
      '{"result":{},"result":{},"jsonrpc":"2.0","id":"gaggle-7"}',
      '{"result":{},"jsonrpc":"2.0","id":"gaggle-7","id":"gaggle-8"}',
      '{"result":{},"jsonrpc":"1.0","id":"gaggle-7"}',
      '{"result":{},"json\\u0072pc":"2.0","id":"gaggle-7"}',
      '{"result":[],"jsonrpc":"2.0","id":"gaggle-7"}',
      '{"result":{"_meta":{"progressToken":1.5}},"jsonrpc":"2.0","id":"gaggle-7"}',
      '{"result":{"\\u005fmeta":{}},"jsonrpc":"2.0","id":"gaggle-7"}',
      '{"result":{"a":01},"jsonrpc":"2.0","id":"gaggle-7"}',
      '{"result":{"a":"\u0001"},"jsonrpc":"2.0","id":"gaggle-7"}',
      '{"result":{},"jsonrpc":"2.0","id":"gaggle-7"} x',
      '{"result":{},"jsonrpc":"2.0","id":"gaggle-7"',
      '{"result":{},"jsonrpc":"2.0"}',
      '{"id":"gaggle-7","result":{}}',
      "",
    ];
    for (const line of lines) expect(plainAnswer(line), line).toBeUndefined();
  });

  it(`takes a result nested to ${MAX_NESTING} levels in all, and leaves a deeper one to be refused`, () => {
    const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
    const deepest = `{"result":{"a":${nested(MAX_NESTING - 2)}},"jsonrpc":"2.0","id":"gaggle-7"}`;
    expect(plainAnswer(deepest)?.id).toBe("gaggle-7");
    expect(decodeMessage(deepest)).toMatchObject({ id: "gaggle-7" });
    const deeper = `{"result":{"a":${nested(MAX_NESTING - 1)}},"jsonrpc":"2.0","id":"gaggle-7"}`;
    expect(plainAnswer(deeper)).toBeUndefined();
    expect(() => decodeMessage(deeper)).toThrow(/nested more than/);
  });

  it("takes only lines decodeMessage takes, with the same id, over generated and mutated answers", () => {
    const next = random(7);
    let taken = 0;
    for (let i = 0; i < 20_000; i++) {
      const result = value(next, 1);
      // Now and then an "isError" among the result's members, true or not, once or twice (JSON.parse keeps the last).
      if (isObject(result) && next() < 0.4) result.isError = [true, false, "true", 1][Math.floor(next() * 4)];
      const resultText = JSON.stringify(result);
      const twice = isObject(result) && "isError" in result && next() < 0.3 ? `{"isError":${next() < 0.5},${resultText.slice(1)}` : resultText;
      const [jsonrpc, id, resultMember] = [`"jsonrpc":"2.0"`, `"id":"gaggle-${i}"`, `"result":${twice}`];
      // Half in the order the TypeScript SDK writes, unspaced, which is read apart (see plainAnswer).
      const sdk = next() < 0.5;
      const members = sdk ? [resultMember, jsonrpc, id] : next() < 0.5 ? [jsonrpc, id, resultMember] : [id, resultMember, jsonrpc];
      const line = sdk ? `{${members.join(",")}}` : spaced(`{${members.join(",")}}`, next);
      const text = i % 2 === 0 ? line : mutated(line, next);
      const answer = plainAnswer(text);
      let decoded: { id?: unknown; result?: unknown } | undefined;
      try {
        decoded = decodeMessage(text) as { id?: unknown; result?: unknown };
      } catch {
        decoded = undefined;
      }
      if (answer !== undefined) {
        const read = decoded?.result;
        if (decoded?.id !== answer.id || !isObject(read) || answer.isError !== (read.isError === true))
          throw new Error(`plainAnswer took ${JSON.stringify(text)}, which decodeMessage reads otherwise`);
        taken++;
      } else if (i % 2 === 0 && isPlainResult(result)) {
        throw new Error(`plainAnswer left a plain answer to be parsed: ${JSON.stringify(text)}`);
      }
    }
    expect(taken).toBeGreaterThan(1_000);
  });
});
