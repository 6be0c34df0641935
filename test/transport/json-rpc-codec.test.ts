// The line codec both stdio ends use: what it takes as it came, and what it refuses, with which code and why.
import { describe, expect, it } from "vitest";
import { decodeErrorReply, decodeMessage, INVALID_REQUEST, MessageDecodeError, PARSE_ERROR } from "../../src/shared/json-rpc-codec.js";

function refusal(line: string): MessageDecodeError {
  try {
    decodeMessage(line);
  } catch (error) {
    if (error instanceof MessageDecodeError) return error;
    throw error;
  }
  throw new Error(`decodeMessage took ${line}`);
}

describe("decodeMessage", () => {
  it("takes every kind of message and keeps fields it does not check", () => {
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", _meta: { progressToken: 7 } } },
      { jsonrpc: "2.0", id: "a", method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, result: { content: [], futureField: { kept: true } } },
      { jsonrpc: "2.0", id: 3, error: { code: -32602, message: "bad", data: { path: "/x" } } },
      { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } },
    ];
    for (const message of lines) expect(decodeMessage(JSON.stringify(message))).toEqual(message);
  });

  it("answers a line that is not JSON with a parse error", () => {
    const error = refusal("{broken");
    expect(error.code).toBe(PARSE_ERROR);
    expect(error.message).toMatch(/^not JSON: /);
    expect(decodeErrorReply(error)).toEqual({ jsonrpc: "2.0", id: null, error: { code: PARSE_ERROR, message: error.message } });
  });

  it("names what is wrong with a message that is JSON but not JSON-RPC", () => {
    const cases: Array<[string, string, string | number | undefined]> = [
      ["[1,2]", "expected a JSON-RPC message object, found an array (JSON-RPC batches are not part of MCP)", undefined],
      ['"text"', "expected a JSON-RPC message object, found a JSON string", undefined],
      ['{"id":1,"method":"ping"}', '"jsonrpc" must be "2.0", found nothing', 1],
      ['{"jsonrpc":"2.0","id":1.5,"method":"ping"}', '"id" must be a string or an integer, found 1.5', undefined],
      ['{"jsonrpc":"2.0","id":4,"method":7}', '"method" must be a string, found 7', 4],
      ['{"jsonrpc":"2.0","id":"q","method":"tools/call","params":[1]}', '"params" must be an object, found [1]', "q"],
      ['{"jsonrpc":"2.0"}', 'a message needs a "method" (request or notification) or an "id" (response)', undefined],
    ];
    for (const [line, problem, id] of cases) {
      const error = refusal(line);
      expect(error.code).toBe(INVALID_REQUEST);
      expect(error.message).toBe(problem);
      expect(error.id).toBe(id);
      expect(error.answerable).toBe(true);
    }
  });

  it("refuses a broken response without answering it", () => {
    const cases: Array<[string, string]> = [
      ['{"jsonrpc":"2.0","id":1,"result":"text"}', '"result" must be an object, found "text"'],
      ['{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}', 'a response needs exactly one of "result" and "error"'],
      [
        '{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}',
        '"error" must be an object with an integer "code" and a string "message", found {"code":"x","message":"m"}',
      ],
    ];
    for (const [line, problem] of cases) {
      const error = refusal(line);
      expect(error.message).toBe(problem);
      expect(error.answerable).toBe(false);
    }
  });
});
