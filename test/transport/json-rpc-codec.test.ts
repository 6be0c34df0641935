// The codec both stdio ends and the HTTP server use: what it takes as it came, and what it refuses, with which code and why.
import { describe, expect, it } from "vitest";
import { isJSONRPCErrorResponse, isJSONRPCNotification, isJSONRPCRequest, isJSONRPCResultResponse } from "@modelcontextprotocol/sdk/types.js";
import {
  decodeBody,
  decodeErrorLine,
  decodeMessage,
  encodeMessage,
  INVALID_REQUEST,
  MAX_NESTING,
  MessageDecodeError,
  OutgoingRequest,
  PARSE_ERROR,
} from "../../src/shared/json-rpc-codec.js";
import { keepAnswerLine } from "../../src/shared/answer-line.js";

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
    expect(JSON.parse(decodeErrorLine(error))).toEqual({ jsonrpc: "2.0", id: null, error: { code: PARSE_ERROR, message: error.message } });
  });

  it("names what is wrong with a message that is JSON but not JSON-RPC", () => {
    const cases: Array<[string, string, string | undefined]> = [
      ["[1,2]", "expected a JSON-RPC message object, found an array (JSON-RPC batches are not part of MCP)", undefined],
      ['"text"', "expected a JSON-RPC message object, found a JSON string", undefined],
      ['{"id":1,"method":"ping"}', '"jsonrpc" must be "2.0", found nothing', "1"],
      ['{"jsonrpc":"2.0","id":1.50,"method":"ping"}', '"id" must be a string or an integer, found 1.50', "1.50"],
      ['{"jsonrpc":"2.0","id":1e400,"method":"ping"}', '"id" must be a string or an integer, found 1e400', "1e400"],
      ['{"jsonrpc":"2.0","id":[1],"method":"ping"}', '"id" must be a string or an integer, found [1]', undefined],
      ['{"jsonrpc":"2.0","id":4,"method":7}', '"method" must be a string, found 7', "4"],
      ['{"jsonrpc":"2.0","id":"q","method":"tools/call","params":[1]}', '"params" must be an object, found [1]', '"q"'],
      ['{"jsonrpc":"2.0"}', 'a message needs a "method" (request or notification) or an "id" (response)', undefined],
      [
        '{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}',
        'unexpected member "extra": a request or notification has only "jsonrpc", "id", "method" and "params"',
        "1",
      ],
      ['{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":[]}}', '"params._meta" must be an object, found []', undefined],
      [
        '{"jsonrpc":"2.0","id":"p","method":"ping","params":{"_meta":{"progressToken":null}}}',
        '"params._meta.progressToken" must be a string or an integer, found null',
        '"p"',
      ],
      [
        '{"jsonrpc":"2.0","id":"t","method":"ping","params":{"_meta":{"io.modelcontextprotocol/related-task":{}}}}',
        '"params._meta["io.modelcontextprotocol/related-task"]" must be an object with a string "taskId", found {}',
        '"t"',
      ],
      [
        '{"jsonrpc":"2.0", "id" : 9007199254740993 ,"method":"ping"}',
        '"id" 9007199254740993 is an integer beyond 2^53, which JSON-RPC peers do not all read exactly; send it as a string',
        "9007199254740993",
      ],
    ];
    for (const [line, problem, idText] of cases) {
      const error = refusal(line);
      expect(error.code).toBe(INVALID_REQUEST);
      expect(error.message).toBe(problem);
      expect(error.idText).toBe(idText);
      expect(error.answerable).toBe(true);
    }
  });

  it("refuses a broken response without answering it", () => {
    const cases: Array<[string, string]> = [
      ['{"jsonrpc":"2.0","id":1,"result":"text"}', '"result" must be an object, found "text"'],
      ['{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}', 'a response needs exactly one of "result" and "error"'],
      ['{"jsonrpc":"2.0","id":1,"result":{},"extra":1}', 'unexpected member "extra": a response has only "jsonrpc", "id" and "result" or "error"'],
      ['{"jsonrpc":"2.0","id":1,"result":{"_meta":"m"}}', '"result._meta" must be an object, found "m"'],
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

describe("decodeErrorLine", () => {
  it("writes the id as the request wrote it, however JSON.parse would read it", () => {
    const line = '{"jsonrpc":"2.0","method":"x","params":{"id":1},"id" :\t-12345678901234567890e3 }';
    expect(decodeErrorLine(refusal(line))).toMatch(/^\{"jsonrpc":"2.0","id":-12345678901234567890e3,"error":\{"code":-32600,"message":"/);
    // The last "id" at the top is the one JSON.parse keeps; one inside a string or a nested object is no member.
    const params = JSON.stringify({ id: 2, s: '\\","id":3' });
    const nested = `{"jsonrpc":"2.0","id":1,"method":"x","params":${params},"id":90071992547409931,"z":"}"}`;
    expect(refusal(nested).idText).toBe("90071992547409931");
  });
});

describe("decodeBody", () => {
  it("takes one message or a batch, each checked as a line of its own, and refuses an empty or too deep batch", () => {
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    expect(decodeBody(JSON.stringify(ping))).toEqual(ping);
    expect(decodeBody(` [${JSON.stringify(ping)}]`)).toEqual([ping]);
    const bodyRefusal = (text: string) => {
      try {
        decodeBody(text);
      } catch (error) {
        if (error instanceof MessageDecodeError) return { code: error.code, message: error.message, idText: error.idText };
      }
      throw new Error(`decodeBody took ${text}`);
    };
    expect(bodyRefusal('[{"jsonrpc":"2.0","id":2,"method":"ping","x":1}]')).toMatchObject({ code: INVALID_REQUEST, idText: "2" });
    expect(bodyRefusal("[")).toMatchObject({ code: PARSE_ERROR });
    expect(bodyRefusal("[]")).toEqual({ code: INVALID_REQUEST, message: "an empty batch: a batch holds one message or more", idText: undefined });
    expect(bodyRefusal(`[${"[".repeat(100_000)}${"]".repeat(100_000)}]`)).toMatchObject({
      code: INVALID_REQUEST,
      message: expect.stringMatching(/^nested more than/),
    });
  });
});

describe("nesting", () => {
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

  it(`takes a message nested ${MAX_NESTING} deep, and refuses one deeper under its id, without walking it`, () => {
    const line = (depth: number) => `{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"a":${nested(depth - 2)}}}`;
    expect(decodeMessage(line(MAX_NESTING))).toMatchObject({ id: "d" });
    const error = refusal(line(MAX_NESTING + 1));
    expect(error.message).toBe(`nested more than ${MAX_NESTING} deep: gaggle reads arrays and objects up to ${MAX_NESTING} levels`);
    expect(error.idText).toBe('"d"');
    // Brackets in strings are text, not nesting.
    expect(decodeMessage(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"${"[{".repeat(MAX_NESTING)}\\\\"}}`)).toMatchObject({ id: 1 });
    expect(refusal(`{"jsonrpc":"2.0","id":${nested(100_000)},"method":"ping"}`).idText).toBeUndefined();
  });
});

describe("fidelity to the SDK's Protocol", () => {
  // A message decodeMessage takes but the Protocol's own checks refuse would be dropped there, unanswered.
  const sdkTakes = (value: unknown) =>
    isJSONRPCRequest(value) || isJSONRPCNotification(value) || isJSONRPCResultResponse(value) || isJSONRPCErrorResponse(value);

  it("takes only what the SDK takes, among lines JSON-RPC's own shape allows", () => {
    const lines = [
      '{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}',
      '{"jsonrpc":"2.0","method":"notifications/x","extra":1}',
      '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":5}}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"progressToken":1.5}}}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"progressToken":9007199254740993}}}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":1}}}}',
      '{"jsonrpc":"2.0","id":1,"result":{"_meta":[]}}',
      '{"jsonrpc":"2.0","id":1,"result":{},"extra":1}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"progressToken":"p","other":[1]},"x":{"y":[]}}}',
      '{"jsonrpc":"2.0","id":"a","result":{"_meta":{"k":1},"content":[]}}',
      '{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m","data":{}}}',
    ];
    for (const line of lines) {
      let taken = true;
      try {
        decodeMessage(line);
      } catch {
        taken = false;
      }
      expect(taken, line).toBe(sdkTakes(JSON.parse(line)));
    }
  });
});

describe("a child's answer passed on as it was written", () => {
  /** The child's line decoded as a child's line is, its result kept with it, and the result answered under `id`. */
  const passedOn = (line: string, childId: string, id: string | number) => {
    const answer = decodeMessage(line) as { result: Record<string, unknown> };
    keepAnswerLine(answer.result, line, childId);
    return { line: encodeMessage({ jsonrpc: "2.0", id, result: answer.result }), result: answer.result };
  };

  it("is the child's own line with the client's id spliced in, however the child ordered, spaced and wrote it", () => {
    const sdk = '{"result":{"content":[{"type":"text","text":"x"}],"n":1.50,"big":12345678901234567890},"jsonrpc":"2.0","id":"gaggle-7"}';
    expect(passedOn(sdk, "gaggle-7", 3).line).toBe(sdk.replace('"gaggle-7"', "3") + "\n");
    const spaced = '{"jsonrpc": "2.0", "id": "gaggle-8", "result": {"content": [], "x": "caf\\u00e9"}}';
    expect(passedOn(spaced, "gaggle-8", "abc").line).toBe(spaced.replace('"gaggle-8"', '"abc"') + "\n");
    const last = '{"result":{},"id":"gaggle-9","jsonrpc":"2.0"}';
    expect(passedOn(last, "gaggle-9", 1).line).toBe('{"result":{},"id":1,"jsonrpc":"2.0"}\n');
    // A child-side id the version's text ends with: the id is spliced, not the version's last characters.
    const zero = '{"result":{"a":1.0},"id":"0","jsonrpc":"2.0"}';
    expect(passedOn(zero, "0", 3).line).toBe('{"result":{"a":1.0},"id":3,"jsonrpc":"2.0"}\n');
    // What a client reads of it is what gaggle read of the child's, but the id.
    expect(JSON.parse(passedOn(sdk, "gaggle-7", 3).line)).toEqual({ ...JSON.parse(sdk), id: 3 });
    const opened = ' \t{ "jsonrpc" : "2.0" ,\r\n "id" : "gaggle-2" , "result": {"a": 1.0}}';
    expect(passedOn(opened, "gaggle-2", 5).line).toBe(opened.replace('"gaggle-2"', "5") + "\n");
    const closed = '{"result":{"a":1.0} , "id" :\t"gaggle-3" , "jsonrpc" : "2.0" } ';
    expect(passedOn(closed, "gaggle-3", 5).line).toBe(closed.replace('"gaggle-3"', "5") + "\n");
    // Last, the top-level id for sure, wherever else the token appears (here inside the result, kept as written too).
    const twice = '{"result":{"structuredContent":{"ref":"gaggle-7","n":1.0}},"jsonrpc":"2.0","id":"gaggle-7"}';
    expect(passedOn(twice, "gaggle-7", 3).line).toBe(twice.replace(/"gaggle-7"}$/, "3}") + "\n");
    // A client's string id is written as JSON writes it, escapes and all.
    const escaped = passedOn('{"result":{"a":1.0},"jsonrpc":"2.0","id":"gaggle-6"}', "gaggle-6", 'say "hi"\\\n\u00e9').line;
    expect(escaped).toBe(`{"result":{"a":1.0},"jsonrpc":"2.0","id":${JSON.stringify('say "hi"\\\n\u00e9')}}\n`);
  });

  it("is serialized when the token sits where no top-level id can be", () => {
    // The token is a value inside the result: under an "id" of an inner object, or under another name.
    const inner = '{"jsonrpc":"2.0","result":{"x":{"id":"gaggle-1"}},"id":"gaggle-0"}';
    expect(passedOn(inner, "gaggle-1", 3).line).toBe('{"jsonrpc":"2.0","id":3,"result":{"x":{"id":"gaggle-1"}}}\n');
    const named = '{"jsonrpc":"2.0","result":{"xid":"gaggle-1"},"id":"gaggle-0"}';
    expect(passedOn(named, "gaggle-1", 3).line).toBe('{"jsonrpc":"2.0","id":3,"result":{"xid":"gaggle-1"}}\n');
    // First after "jsonrpc", but that member is not "2.0" as written (a child's line is checked before it gets here).
    const nested = '{"result":{"a":[{"jsonrpc":"2.0","id":"gaggle-1"}]},"jsonrpc":"2.0","id":"gaggle-0"}';
    expect(passedOn(nested, "gaggle-1", 3).line).toBe('{"jsonrpc":"2.0","id":3,"result":{"a":[{"jsonrpc":"2.0","id":"gaggle-1"}]}}\n');
  });

  it("is serialized when the id cannot be told for sure to be the top-level one, or the result was made anew", () => {
    // Serialized, a 1.0 the child wrote reads 1: which one the client gets tells which way the answer went.
    const twice = '{"jsonrpc":"2.0","id":"gaggle-7","result":{"structuredContent":{"ref":"gaggle-7","n":1.0}}}';
    expect(passedOn(twice, "gaggle-7", 3).line).toBe('{"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"ref":"gaggle-7","n":1}}}\n');
    // Last, but the value of "jsonrpc": a child-side id "2.0" is found twice, as the id and as the version.
    const version = '{"result":{"a":1.0},"id":"2.0","jsonrpc":"2.0"}';
    expect(passedOn(version, "2.0", 3).line).toBe('{"jsonrpc":"2.0","id":3,"result":{"a":1}}\n');
    // First, but an "id" follows it: it might be a second top-level id, which is the one JSON.parse keeps.
    const first = '{"jsonrpc":"2.0","id":"gaggle-4","result":{"items":[{"id":1.0}]}}';
    expect(passedOn(first, "gaggle-4", 3).line).toBe('{"jsonrpc":"2.0","id":3,"result":{"items":[{"id":1}]}}\n');
    const kept = passedOn('{"result":{"a":1.0},"jsonrpc":"2.0","id":"gaggle-5"}', "gaggle-5", 3).result;
    expect(encodeMessage({ jsonrpc: "2.0", id: 3, result: { ...kept } })).toBe('{"jsonrpc":"2.0","id":3,"result":{"a":1}}\n');
    expect(encodeMessage({ jsonrpc: "2.0", id: 3, result: { a: 1 } })).toBe('{"jsonrpc":"2.0","id":3,"result":{"a":1}}\n');
  });
});

describe("a request gaggle sends a child", () => {
  it("is written as JSON.stringify writes the same request, whatever its id, method and params hold", () => {
    const params = {
      name: "echo",
      arguments: { message: 'a "quoted" line\n\u00e9\ud800', n: 1.5, none: undefined, list: [null, {}] },
      _meta: { k: "v" },
    };
    for (const [id, method] of [
      ["gaggle-1", "tools/call"],
      ['odd "id"\\', "x\ty"],
    ]) {
      const plain = { jsonrpc: "2.0", id, method, params };
      expect(encodeMessage(new OutgoingRequest(id!, method!, params))).toBe(JSON.stringify(plain) + "\n");
      // Copied, as a 2026-07-28 child's envelope copies it, it is the same request.
      expect({ ...new OutgoingRequest(id!, method!, params) }).toEqual(plain);
    }
  });
});
