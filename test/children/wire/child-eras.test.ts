// Children of both protocol eras, from clients of both eras: gaggle finds which era each child speaks (server/discover,
// then initialize when a child does not answer it as a 2026-07-28 server), remembers it, and bridges a 2026-07-28 child's input_required to a 2025 client.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpGaggle, type HttpGaggle } from "../../helpers/gaggle-http.js";
import { envelope, modernCall } from "../../helpers/modern-http.js";
import { fixture, fixtureChild, NO_BUILT_INS } from "../../helpers/paths.js";

const conformanceChild = (name: string, args: string[], extra = "") =>
  `[mcp_servers.${name}]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ${JSON.stringify([fixture("conformance-server.mjs"), ...args])}\n${extra}\n`;

let gaggle: HttpGaggle;
let legacy: Client;
const asked: string[] = [];

beforeAll(async () => {
  gaggle = await startHttpGaggle(
    [
      '[gateway]\nexpose = "both"\nlist_wait_ms = 30000\n',
      NO_BUILT_INS,
      conformanceChild("modern", ["--modern-only"]),
      conformanceChild("both", []),
      conformanceChild("asked", [], 'protocol = "2026-07-28"'),
      conformanceChild("pinned", ["--modern-only"], 'protocol = "2025-11-25"'),
      fixtureChild("legacy", "protocol.mjs"),
    ].join("\n"),
  );
  legacy = await gaggle.connect({ client: { capabilities: { sampling: {}, elicitation: {}, roots: {} } } });
  // Fills in every field the form asks for: a name, a colour, a confirmation.
  const VALUES: Record<string, string | boolean> = { name: "Alice", color: "blue", ok: true };
  legacy.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.method);
    const fields = Object.keys((request.params as { requestedSchema?: { properties?: object } }).requestedSchema?.properties ?? {});
    return { action: "accept", content: Object.fromEntries(fields.map((field) => [field, VALUES[field] ?? "x"])) };
  });
  legacy.setRequestHandler(CreateMessageRequestSchema, (request) => {
    asked.push(request.method);
    return { role: "assistant", content: { type: "text", text: "Paris" }, model: "m", stopReason: "endTurn" };
  });
  legacy.setRequestHandler(ListRootsRequestSchema, (request) => {
    asked.push(request.method);
    return { roots: [{ uri: "file:///one", name: "One" }] };
  });
});

afterAll(async () => {
  await legacy.close();
  await gaggle.stop();
});

const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text;

async function status(name: string): Promise<{ protocol: string | null; error: string | null; status: string }> {
  return JSON.parse(text(await legacy.callTool({ name: "get_child_status", arguments: { server_id: name } }))) as never;
}

const CAPABLE = { "io.modelcontextprotocol/clientCapabilities": { sampling: {}, elicitation: {}, roots: {} } };

describe("which era each child speaks", () => {
  it("is found by asking, remembered, and shown in get_child_status", async () => {
    for (const name of ["modern", "both", "asked", "legacy"]) await legacy.callTool({ name: "get_schema", arguments: { server_id: name } });
    // A child that speaks both is asked server/discover first, so it is spoken to in 2026-07-28.
    expect((await status("modern")).protocol).toBe("2026-07-28");
    expect((await status("both")).protocol).toBe("2026-07-28");
    expect((await status("asked")).protocol).toBe("2026-07-28");
    expect((await status("legacy")).protocol).toBe("2025-11-25");
  });

  it("a child held to an era it does not speak fails to start, and says why", async () => {
    const refused = await legacy.callTool({ name: "get_schema", arguments: { server_id: "pinned" } });
    expect(refused.isError).toBe(true);
    const { status: state, error } = await status("pinned");
    expect(state).toBe("failed");
    expect(error).toMatch(/-32022|[Uu]nsupported protocol version/);
  });
});

describe("a 2026-07-28 child from a 2025 client's session", () => {
  it("lists and calls its tools like any other", async () => {
    const { tools } = await legacy.listTools();
    expect(tools.map((tool) => tool.name)).toContain("modern__test_simple_text");
    expect(text(await legacy.callTool({ name: "modern__test_simple_text", arguments: {} }))).toBe("This is a simple text response for testing.");
  });

  it("its input_required becomes requests to the client, and gaggle retries with the answers", async () => {
    asked.length = 0;
    expect(text(await legacy.callTool({ name: "modern__test_input_required_result_elicitation", arguments: {} }))).toBe("Hello, Alice!");
    expect(text(await legacy.callTool({ name: "asked__test_input_required_result_sampling", arguments: {} }))).toContain("Paris");
    expect(text(await legacy.callTool({ name: "modern__test_input_required_result_list_roots", arguments: {} }))).toContain("file:///one");
    expect(asked).toEqual(["elicitation/create", "sampling/createMessage", "roots/list"]);
  });

  it("several rounds, and several questions in one round", async () => {
    asked.length = 0;
    const multi = await legacy.callTool({ name: "modern__test_input_required_result_multiple_inputs", arguments: {} });
    expect(multi.isError).toBeFalsy();
    expect([...asked].sort()).toEqual(["elicitation/create", "roots/list", "sampling/createMessage"]);
    const rounds = await legacy.callTool({ name: "modern__test_input_required_result_multi_round", arguments: {} });
    expect(rounds.isError).toBeFalsy();
  });
});

describe("a 2026-07-28 child from a 2026-07-28 client", () => {
  const call = (name: string, retry: Record<string, unknown> = {}, meta: Record<string, unknown> = CAPABLE) =>
    modernCall(gaggle.port, { method: "tools/call", params: { name, arguments: {}, ...retry, _meta: envelope(meta) } });

  it("its input_required passes through as the child wrote it, and the retry reaches the child with its own state", async () => {
    const first = (await call("modern__test_input_required_result_request_state")).message.result as {
      resultType: string;
      inputRequests: Record<string, unknown>;
      requestState: string;
    };
    expect(first.resultType).toBe("input_required");
    expect(Object.keys(first.inputRequests)).toEqual(["confirm"]);
    expect(first.requestState).not.toMatch(/^gaggle1\./);
    const done = await call("modern__test_input_required_result_request_state", {
      requestState: first.requestState,
      inputResponses: { confirm: { action: "accept", content: { ok: true } } },
    });
    expect(text(done.message.result)).toContain("state-ok");
  });

  it("the child hears the client's own capabilities: it asks only what the client can answer, or refuses with -32021", async () => {
    const onlySampling = await call(
      "asked__test_input_required_result_capabilities",
      {},
      {
        "io.modelcontextprotocol/clientCapabilities": { sampling: {} },
      },
    );
    const methods = Object.values((onlySampling.message.result as { inputRequests: Record<string, { method: string }> }).inputRequests).map(
      (request) => request.method,
    );
    expect(methods).toEqual(["sampling/createMessage"]);
    const refused = await call("modern__test_missing_capability", {}, { "io.modelcontextprotocol/clientCapabilities": {} });
    expect(refused.message.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
  });

  it("a requestState gaggle did not issue, sent to a 2025 child, is -32602", async () => {
    const { message } = await call("legacy__roots", { requestState: "from-somewhere-else" });
    expect(message.error).toMatchObject({ code: -32602, data: { reason: "invalid_request_state" } });
  });
});
