// execute_child_tool's shortcut past its schema's validator: taken for the shape nearly every call has, and never
// for arguments the schema refuses.
import { describe, expect, it } from "vitest";
import { checkArguments } from "../../../src/children/calls/arg-validator.js";
import { plainExecuteArgs } from "../../../src/gateway/meta/meta-handlers.js";
import { metaTool } from "../../../src/gateway/meta/meta-tools.js";

const schema = metaTool("execute_child_tool");
const fitsSchema = (args: unknown) => checkArguments(schema, args) === undefined;

/** As clients send them: each parsed from JSON, so that a "__proto__" key is an own member, as JSON.parse makes it. */
const plain = [
  '{"server_id":"echo","tool_name":"echo","arguments":{"message":"hi"}}',
  '{"tool_name":"echo","server_id":"echo"}',
  '{"server_id":"é","tool_name":"t","arguments":{}}',
  '{"server_id":"echo","tool_name":"echo","arguments":{"__proto__":{"x":1},"deep":[{"a":null}]}}',
];
const other = [
  '{"server_id":"echo","tool_name":"echo","head":3}',
  '{"server_id":"echo","tool_name":"echo","tail":0,"arguments":{}}',
  '{"server_id":"echo","tool_name":"echo","head":-1}',
  '{"server_id":"echo","tool_name":"echo","extra":true}',
  '{"server_id":"echo","tool_name":"echo","__proto__":{}}',
  '{"server_id":"","tool_name":"echo"}',
  '{"server_id":"echo","tool_name":""}',
  '{"server_id":5,"tool_name":"echo"}',
  '{"server_id":"echo","tool_name":null}',
  '{"tool_name":"echo"}',
  '{"server_id":"echo"}',
  '{"server_id":"echo","tool_name":"echo","arguments":null}',
  '{"server_id":"echo","tool_name":"echo","arguments":[]}',
  '{"server_id":"echo","tool_name":"echo","arguments":"{}"}',
  "[]",
  "null",
  '"echo"',
  "{}",
];

describe("plainExecuteArgs", () => {
  it("takes the plain shapes, which the schema takes too", () => {
    for (const text of plain) {
      const args: unknown = JSON.parse(text);
      expect([text, plainExecuteArgs(args)]).toEqual([text, true]);
      expect([text, fitsSchema(args)]).toEqual([text, true]);
    }
  });

  it("leaves every other shape to the schema, whether it fits or not", () => {
    for (const text of other) expect([text, plainExecuteArgs(JSON.parse(text))]).toEqual([text, false]);
    // Both kinds are among them: the schema's answer is what counts for these.
    const fits = other.filter((text) => fitsSchema(JSON.parse(text)));
    expect(fits).toEqual([other[0], other[1]]);
  });
});
