// Two principals' calls in flight at once over Streamable HTTP: each reply reaches only the client that asked, a failed
// call's answer too, one principal's cancelled call gives its place at the child to the other's, and one principal's
// notifications/cancelled cannot cancel the other's call, whatever request id it names.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../helpers/gaggle.js";
import { bearer, startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";
import { until } from "../helpers/poll.js";

const ANN = "ann-token-7Hd2pQ9wXc";
const BOB = "bob-token-3Lk8mZ5vNr";

let gaggle: HttpGaggle;
let ann: Client;
let bob: Client;

beforeAll(async () => {
  const tokens = `[gateway.auth_tokens]\nann = "${ANN}"\nbob = "${BOB}"\n`;
  gaggle = await startHttpGaggle(
    [tokens, NO_BUILT_INS, fixtureChild("slow", "slow.mjs", "concurrency = 8"), fixtureChild("echo", "echo.mjs", "concurrency = 8")].join("\n"),
  );
  ann = await gaggle.connect({ name: "ann", ...bearer(ANN) });
  bob = await gaggle.connect({ name: "bob", ...bearer(BOB) });
});
afterAll(() => gaggle?.stop());

const sleep = (client: Client, ms: number) =>
  client.callTool({ name: "execute_child_tool", arguments: { server_id: "slow", tool_name: "sleep", arguments: { ms } } }) as Promise<CallToolResult>;

describe("two principals' calls in flight together", () => {
  it("each get their own replies", async () => {
    const anns = [101, 103, 105, 107].map((ms) => sleep(ann, ms));
    const bobs = [102, 104, 106, 108].map((ms) => sleep(bob, ms));
    const texts = async (calls: Array<Promise<CallToolResult>>) => (await Promise.all(calls)).map((result) => textOf(result).split(" (")[0]);
    expect(await texts(anns)).toEqual(["slept 101", "slept 103", "slept 105", "slept 107"]);
    expect(await texts(bobs)).toEqual(["slept 102", "slept 104", "slept 106", "slept 108"]);
  });

  it("each get their own replies with many in flight, answered out of order, under request ids both clients use", async () => {
    // More calls than the child's concurrency, each session's table of calls and streams by request id holding many
    // at once; ann's sleeps are odd and bob's even, and later calls are shorter, so answers come back out of order.
    const mss = (first: number) => Array.from({ length: 24 }, (_, i) => first + 2 * ((i * 7) % 24));
    const anns = mss(21).map((ms) => sleep(ann, ms));
    const bobs = mss(22).map((ms) => sleep(bob, ms));
    const texts = async (calls: Array<Promise<CallToolResult>>) => (await Promise.all(calls)).map((result) => textOf(result).split(" (")[0]);
    expect(await texts(anns)).toEqual(mss(21).map((ms) => `slept ${ms}`));
    expect(await texts(bobs)).toEqual(mss(22).map((ms) => `slept ${ms}`));
  });

  it("each get their own child's answers passed on as written, a tool error among them told as theirs", async () => {
    // Every answer here is a plain one, taken as its line and never parsed (an HTTP gaggle observes its calls, and
    // reads of each only whether it is an error): ann's odd calls fail at the child, bob's even ones.
    const call = (client: Client, who: string, i: number, fails: boolean) =>
      client.callTool({
        name: "execute_child_tool",
        arguments: { server_id: "echo", tool_name: fails ? "fail" : "echo", arguments: fails ? { message: `${who} ${i}` } : { text: `${who} ${i}` } },
      }) as Promise<CallToolResult>;
    const anns = Array.from({ length: 12 }, (_, i) => call(ann, "ann", i, i % 2 === 1));
    const bobs = Array.from({ length: 12 }, (_, i) => call(bob, "bob", i, i % 2 === 0));
    const seen = async (calls: Array<Promise<CallToolResult>>) =>
      (await Promise.all(calls)).map((result) => `${textOf(result)}${result.isError ? " failed" : ""}`);
    expect(await seen(anns)).toEqual(Array.from({ length: 12 }, (_, i) => `ann ${i}${i % 2 === 1 ? " failed" : ""}`));
    expect(await seen(bobs)).toEqual(Array.from({ length: 12 }, (_, i) => `bob ${i}${i % 2 === 0 ? " failed" : ""}`));
    // What observes the calls read each one's isError from its unparsed answer: twelve tool errors, twelve answers.
    const metrics = await (await fetch(new URL("/metrics", gaggle.url), bearer(ANN))).text();
    const counted = (pattern: RegExp) =>
      metrics
        .split("\n")
        .filter((line) => line.startsWith("mcp_client_operation_duration_seconds_count{") && pattern.test(line))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
    expect(counted(/gen_ai_tool_name="fail".*error_type="tool_error"/)).toBe(12);
    expect(counted(/gen_ai_tool_name="echo"/)).toBe(12);
    expect(counted(/gen_ai_tool_name="echo".*error_type=/)).toBe(0);
  });

  it("each hear of their own failed calls, as results that say why, while the other's calls are answered", async () => {
    const execute = (client: Client, toolName: string, args: Record<string, unknown>) =>
      client.callTool({
        name: "execute_child_tool",
        arguments: { server_id: "slow", tool_name: toolName, arguments: args },
      }) as Promise<CallToolResult>;
    const anns = [execute(ann, "no_such_tool", {}), sleep(ann, 41), execute(ann, "sleep", { ms: "soon" })];
    const bobs = [sleep(bob, 42), execute(bob, "sleep", { ms: -1 }), sleep(bob, 44)];
    const outcomes = async (calls: Array<Promise<CallToolResult>>) =>
      (await Promise.all(calls)).map((result) => (result.isError ? `failed ${JSON.parse(textOf(result)).code}` : textOf(result).split(" (")[0]));
    expect(await outcomes(anns)).toEqual(["failed TOOL_NOT_FOUND", "slept 41", "failed INVALID_ARGS"]);
    expect(await outcomes(bobs)).toEqual(["slept 42", "failed INVALID_ARGS", "slept 44"]);
  });

  it("a call one cancels gives its place at the child to the other's call waiting behind it", async () => {
    // A real child runs one client's calls at a time: bob's call waits for ann's, which would sleep far past the
    // test's timeout. Cancelled, ann's call ends at once, and its place in the child's line goes to bob's.
    const stop = new AbortController();
    const annCall = ann.callTool(
      { name: "execute_child_tool", arguments: { server_id: "slow", tool_name: "sleep", arguments: { ms: 60_000 } } },
      undefined,
      { signal: stop.signal, timeout: 120_000 },
    );
    const annEnded = annCall.then(
      () => "answered",
      () => "cancelled",
    );
    // Ann's call holds its place at the child before bob's is made.
    const status = async () =>
      JSON.parse(textOf((await ann.callTool({ name: "get_child_status", arguments: { server_id: "slow" } })) as CallToolResult)) as {
        queue: { running: number };
      };
    await until(status, ({ queue }) => queue.running === 1);
    const bobCall = sleep(bob, 5);
    stop.abort("ann changed her mind");
    expect(await annEnded).toBe("cancelled");
    expect(textOf(await bobCall).split(" (")[0]).toBe("slept 5");
  });

  it("one cannot cancel the other's call by naming its request id", async () => {
    const annCall = sleep(ann, 1500);
    // Every id the other client's requests can have had by now: the SDK's client numbers them from 0.
    for (let requestId = 0; requestId < 20; requestId++) {
      await bob.notification({ method: "notifications/cancelled", params: { requestId, reason: "not yours" } });
    }
    const result = await annCall;
    expect(result.isError).not.toBe(true);
    expect(textOf(result).split(" (")[0]).toBe("slept 1500");
  });
});
