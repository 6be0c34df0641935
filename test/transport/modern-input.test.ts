// A 2025-era child asking for input during a 2026-07-28 client's call: its sampling, elicitation and roots requests
// become an input_required result, and the client's retry (inputResponses + requestState) resumes the child's call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { envelope, modernCall, modernRequest } from "../helpers/modern-http.js";
import { fixtureChild, NO_BUILT_INS } from "../helpers/paths.js";

let gaggle: HttpGaggle;

beforeAll(async () => {
  gaggle = await startHttpGaggle(
    ['[gateway]\nexpose = "both"\nlist_wait_ms = 30000\n', NO_BUILT_INS, fixtureChild("protocol", "protocol.mjs")].join("\n"),
  );
});

afterAll(async () => {
  await gaggle.stop();
});

const EVERYTHING = { sampling: {}, elicitation: {}, roots: {} };

type Result = Record<string, unknown> & {
  inputRequests?: Record<string, { method: string; params?: Record<string, unknown> }>;
  requestState?: string;
};

/** One round of a tool call; `retry` carries the previous round's state and this round's answers. */
async function round(
  name: string,
  args: Record<string, unknown>,
  retry: { requestState?: unknown; inputResponses?: unknown } = {},
  capabilities: Record<string, unknown> = EVERYTHING,
) {
  const { status, message } = await modernCall(gaggle.port, {
    method: "tools/call",
    params: { name, arguments: args, ...retry, _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": capabilities }) },
  });
  return { status, result: message.result as Result | undefined, error: message.error as Record<string, unknown> | undefined };
}

const textOf = (result: Result | undefined) => (result?.content as Array<{ text: string }>)[0]!.text;

describe("a legacy child's question during a modern call", () => {
  it("sampling: the round ends input_required with the child's request; the retry's answer completes the call", async () => {
    const first = await round("protocol__sample", { prompt: "Capital of France?" });
    expect(first.status).toBe(200);
    expect(first.result).toMatchObject({ resultType: "input_required", requestState: expect.stringMatching(/^gaggle1\./) });
    expect(first.result).not.toHaveProperty("ttlMs");
    const [key, request] = Object.entries(first.result!.inputRequests!)[0]!;
    expect(request).toMatchObject({
      method: "sampling/createMessage",
      params: { messages: [{ role: "user", content: { type: "text", text: "Capital of France?" } }], maxTokens: 50 },
    });
    const answer = { role: "assistant", content: { type: "text", text: "Paris" }, model: "m", stopReason: "endTurn" };
    const second = await round("protocol__sample", {}, { requestState: first.result!.requestState, inputResponses: { [key]: answer } });
    expect(second.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "sampled: Paris" }] });
  });

  it("elicitation and roots asked at once come in one round; each answer goes to its own request", async () => {
    const first = await round("protocol__survey", {});
    const requests = first.result!.inputRequests!;
    const byMethod = Object.fromEntries(Object.entries(requests).map(([key, request]) => [request.method, key]));
    expect(Object.keys(byMethod).sort()).toEqual(["elicitation/create", "roots/list"]);
    expect(requests[byMethod["elicitation/create"]!]!.params).toMatchObject({ mode: "form", message: "Your name?" });
    const second = await round(
      "protocol__survey",
      {},
      {
        requestState: first.result!.requestState,
        inputResponses: {
          [byMethod["elicitation/create"]!]: { action: "accept", content: { name: "Ada" } },
          [byMethod["roots/list"]!]: { roots: [{ uri: "file:///a" }, { uri: "file:///b" }] },
        },
      },
    );
    expect(textOf(second.result)).toBe("Ada has 2 roots");
  });

  it("a question the child asks after an answer makes another round, with a new requestState; an unanswered one is asked again", async () => {
    const first = await round("protocol__interview", {});
    const [nameKey] = Object.keys(first.result!.inputRequests!);

    // Answering nothing: the same question again, under a new state.
    const again = await round("protocol__interview", {}, { requestState: first.result!.requestState, inputResponses: {} });
    expect(again.result).toMatchObject({ resultType: "input_required", inputRequests: first.result!.inputRequests });
    expect(again.result!.requestState).not.toBe(first.result!.requestState);

    const second = await round(
      "protocol__interview",
      {},
      { requestState: again.result!.requestState, inputResponses: { [nameKey!]: { action: "accept", content: { name: "Ada" } } } },
    );
    const [sampleKey, sample] = Object.entries(second.result!.inputRequests!)[0]!;
    expect(sample).toMatchObject({ method: "sampling/createMessage", params: { messages: [{ content: { text: "Greet Ada" } }] } });
    const third = await round(
      "protocol__interview",
      {},
      {
        requestState: second.result!.requestState,
        inputResponses: { [sampleKey]: { role: "assistant", content: { type: "text", text: "Hello, Ada!" }, model: "m" } },
      },
    );
    expect(third.result).toMatchObject({ resultType: "complete", content: [{ text: "Hello, Ada!" }] });
  });

  it("a requestState resumes once, only its own request, and a forged one is -32602", async () => {
    const first = await round("protocol__elicit", { message: "Name?" });
    const state = first.result!.requestState!;
    const [key] = Object.keys(first.result!.inputRequests!);
    const answers = { [key!]: { action: "accept", content: { name: "Ada" } } };

    const forged = await round("protocol__elicit", {}, { requestState: `${state}-TAMPERED`, inputResponses: answers });
    expect(forged.error).toMatchObject({ code: -32602, data: { reason: "invalid_request_state" } });
    const elsewhere = await round("protocol__sample", { prompt: "x" }, { requestState: state, inputResponses: answers });
    expect(elsewhere.error).toMatchObject({ code: -32602, message: expect.stringContaining("issued for tools/call protocol__elicit") });
    const notString = await round("protocol__elicit", {}, { requestState: 42 });
    expect(notString.error).toMatchObject({ code: -32602, message: expect.stringContaining("params.requestState") });

    const done = await round("protocol__elicit", {}, { requestState: state, inputResponses: answers });
    expect(JSON.parse(textOf(done.result))).toEqual({ action: "accept", content: { name: "Ada" } });
    const replayed = await round("protocol__elicit", {}, { requestState: state, inputResponses: answers });
    expect(replayed.error).toMatchObject({ code: -32602, message: expect.stringContaining("already used") });
  });

  it("a call waiting for its client's answers holds up no other call of its child, and takes its turn again to go on", async () => {
    const parked = await round("protocol__elicit", { message: "Name?" });
    const [key] = Object.keys(parked.result!.inputRequests!);
    // The child serves one call at a time (concurrency 1), from one client at a time: these come from others.
    const other = await round("protocol__who", {});
    expect(other.result).toMatchObject({ resultType: "complete" });
    const session = await gaggle.connect();
    try {
      expect(await session.callTool({ name: "protocol__log_level", arguments: {} })).toMatchObject({ content: [{ type: "text" }] });
    } finally {
      await session.close();
    }
    const done = await round(
      "protocol__elicit",
      {},
      { requestState: parked.result!.requestState, inputResponses: { [key!]: { action: "decline" } } },
    );
    expect(JSON.parse(textOf(done.result))).toEqual({ action: "decline" });
  });

  it("a client without the capability a question needs gets -32021 naming it (HTTP 400); the child's call ends at once, freeing its slot", async () => {
    const refused = await round("protocol__sample", { prompt: "x" }, {}, { elicitation: {} });
    expect(refused).toMatchObject({ status: 400, error: { code: -32021, data: { requiredCapabilities: { sampling: {} } } } });
    const rootsRefused = await round("protocol__roots", {}, {}, {});
    expect(rootsRefused.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { roots: {} } } });
  });

  it("prompts/get asks the same way: its retry gets the prompt", async () => {
    const get = (retry: Record<string, unknown> = {}) =>
      modernCall(gaggle.port, {
        method: "prompts/get",
        params: { name: "protocol__introduce", ...retry, _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": EVERYTHING }) },
      });
    const first = (await get()).message.result as Result;
    const [key, request] = Object.entries(first.inputRequests!)[0]!;
    expect(request.method).toBe("elicitation/create");
    const second = (await get({ requestState: first.requestState, inputResponses: { [key]: { action: "accept", content: { name: "Ada" } } } }))
      .message.result;
    expect(second).toMatchObject({ resultType: "complete", messages: [{ content: { text: "Please meet Ada." } }] });
  });

  it("through execute_child_tool too", async () => {
    const first = await round("execute_child_tool", { server_id: "protocol", tool_name: "roots", arguments: {} });
    const [key] = Object.keys(first.result!.inputRequests!);
    const done = await round(
      "execute_child_tool",
      { server_id: "protocol", tool_name: "roots", arguments: {} },
      { requestState: first.result!.requestState, inputResponses: { [key!]: { roots: [{ uri: "file:///r", name: "R" }] } } },
    );
    expect(JSON.parse(textOf(done.result))).toEqual({ roots: [{ uri: "file:///r", name: "R" }] });
  });

  it("progress during a later round goes on that round's stream", async () => {
    const first = await round("protocol__elicit", { message: "Name?" });
    const [key] = Object.keys(first.result!.inputRequests!);
    const response = await modernRequest(gaggle.port, {
      method: "tools/call",
      params: {
        name: "protocol__elicit",
        arguments: {},
        requestState: first.result!.requestState,
        inputResponses: { [key!]: { action: "decline" } },
        _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": EVERYTHING }),
      },
    });
    const frames = await response.all();
    expect(JSON.parse((frames.at(-1)!.result as { content: Array<{ text: string }> }).content[0]!.text)).toEqual({ action: "decline" });
  });
});

describe("a paused call's requestState over HTTP with a token per person", () => {
  const TOKENS = { GAGGLE_TEST_ANN: "ann-token-0123456789", GAGGLE_TEST_BOB: "bob-token-0123456789" };
  let tokened: HttpGaggle;
  beforeAll(async () => {
    const config = [
      '[gateway]\nauth_tokens = { ann = "${GAGGLE_TEST_ANN}", bob = "${GAGGLE_TEST_BOB}" }\n',
      NO_BUILT_INS,
      fixtureChild("protocol", "protocol.mjs"),
    ].join("\n");
    tokened = await startHttpGaggle(config, { env: TOKENS });
  });
  afterAll(() => tokened?.stop());

  const as = async (token: string, tool: string, args: Record<string, unknown>, retry: Record<string, unknown> = {}) => {
    const { message } = await modernCall(tokened.port, {
      method: "tools/call",
      params: {
        name: "execute_child_tool",
        arguments: { server_id: "protocol", tool_name: tool, arguments: args },
        ...retry,
        _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": EVERYTHING }),
      },
      headers: { authorization: `Bearer ${token}` },
    });
    return { result: message.result as Result | undefined, error: message.error as Record<string, unknown> | undefined };
  };
  const answer = { role: "assistant", content: { type: "text", text: "Paris" }, model: "m", stopReason: "endTurn" };

  it("resumes only for the principal it was issued to, and only for the child and tool it was issued for", async () => {
    const first = await as(TOKENS.GAGGLE_TEST_ANN, "sample", { prompt: "Capital of France?" });
    const state = first.result!.requestState;
    expect(state).toMatch(/^gaggle1\./);
    const [key] = Object.keys(first.result!.inputRequests!);
    const retry = { requestState: state, inputResponses: { [key!]: answer } };
    // Bob's client calls itself the same as Ann's: the state is still not his.
    const stolen = await as(TOKENS.GAGGLE_TEST_BOB, "sample", {}, retry);
    expect(stolen.error).toMatchObject({ code: -32602, data: { reason: "invalid_request_state" } });
    const otherTool = await as(TOKENS.GAGGLE_TEST_ANN, "survey", {}, retry);
    expect(otherTool.error).toMatchObject({ code: -32602, message: expect.stringContaining("not for this request") });
    const resumed = await as(TOKENS.GAGGLE_TEST_ANN, "sample", {}, retry);
    expect(resumed.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "sampled: Paris" }] });
  });
});
