// A child over Streamable HTTP that speaks both eras, whose 2026-07-28 mode cannot ask its client anything (its
// sampling and elicitation tools fail there) while its 2025-11-25 mode can: each client is served in its own era,
// so a 2025 client gets through gaggle what it gets from the child directly, and so does a 2026-07-28 client.
import { CreateMessageRequestSchema, ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConformanceFixture, type ConformanceFixture } from "../helpers/conformance-fixture.js";
import { textOf } from "../helpers/gaggle.js";
import { startHttpGaggle, type HttpGaggle } from "../helpers/gaggle-http.js";
import { envelope, modernCall } from "../helpers/modern-http.js";
import { NO_BUILT_INS } from "../helpers/paths.js";

let child: ConformanceFixture;
let gaggle: HttpGaggle;

beforeAll(async () => {
  child = await startConformanceFixture(["--modern-cannot-ask"]);
  gaggle = await startHttpGaggle(
    [`[gateway]\nexpose = "both"\n`, NO_BUILT_INS, `[mcp_servers.both]\ntype = "http"\nurl = "${child.url}"\nprefix = ""\n`].join("\n"),
  );
});

afterAll(async () => {
  await gaggle?.stop();
  await child?.stop();
});

describe("a child of both eras, reached in the era of the client that asks", () => {
  it("serves a 2025-11-25 client's sampling and elicitation on a 2025-11-25 session, as the child does directly", async () => {
    const client = await gaggle.connect({ client: { capabilities: { sampling: {}, elicitation: { form: {} } } } });
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: "assistant",
      content: { type: "text", text: "Paris" },
      model: "m",
      stopReason: "endTurn",
    }));
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { username: "alice" } }));
    const sampled = (await client.callTool({ name: "test_sampling", arguments: { prompt: "The capital of France?" } })) as CallToolResult;
    expect(sampled.isError).toBeFalsy();
    expect(textOf(sampled)).toBe("LLM response: Paris");
    const elicited = (await client.callTool({ name: "test_elicitation", arguments: { message: "Who are you?" } })) as CallToolResult;
    expect(textOf(elicited)).toContain("alice");
    // The child's lists, and its status, are those of the session gaggle found: 2026-07-28.
    const status = JSON.parse(textOf((await client.callTool({ name: "get_child_status", arguments: { server_id: "both" } })) as CallToolResult));
    expect(status.protocol).toBe("2026-07-28");
    await client.close();
  });

  it("serves a 2026-07-28 client in 2026-07-28, where the child's tool cannot ask, as directly", async () => {
    const params = {
      name: "test_sampling",
      arguments: { prompt: "The capital of France?" },
      _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": { sampling: {} } }),
    };
    const { message } = await modernCall(gaggle.port, { method: "tools/call", params });
    expect(message.result).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "test_sampling cannot ask the client anything in this mode" }],
    });
  });
});
