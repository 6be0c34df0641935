import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { startHttpFixture, type HttpFixture } from "../../helpers/http-fixture.js";

interface Status {
  server_id: string;
  status: string;
  transport: string;
  pid: number | null;
  calls_served: number;
  error: string | null;
}

const WRONG = "not-the-secret-7f3a";
// What the fixture answers without the right header: HTTP 401 with this body.
const REFUSAL = /401|missing or wrong required header/;

let server: HttpFixture;
let gaggle: RunningGaggle;

/** A remote child entry; `header` is the TOML value of X-Gaggle-Test. */
function remoteChild(name: string, type: "http" | "sse", url: string, header: string): string {
  return `[mcp_servers.${name}]\ntype = "${type}"\nurl = ${JSON.stringify(url)}\nheaders = { X-Gaggle-Test = ${header} }\n`;
}

beforeAll(async () => {
  server = await startHttpFixture("X-Gaggle-Test=secret");
  const mcp = `${server.origin}/mcp`;
  const sse = `${server.origin}/sse`;
  const config = [
    remoteChild("http_ok", "http", mcp, '"secret"'),
    remoteChild("sse_ok", "sse", sse, '"secret"'),
    remoteChild("http_bad", "http", mcp, `"${WRONG}"`),
    remoteChild("sse_bad", "sse", sse, `"${WRONG}"`),
    remoteChild("http_var", "http", mcp, '"${GAGGLE_TEST_HEADER}"'),
    remoteChild("sse_var", "sse", sse, '"${GAGGLE_TEST_HEADER}"'),
  ].join("\n");
  gaggle = await startGaggle(config, { env: { GAGGLE_TEST_HEADER: "secret" } });
});
afterAll(async () => {
  await gaggle?.close();
  await server?.stop();
});

const call = (server_id: string, tool: string, args: Record<string, unknown> = {}) =>
  gaggle.meta("execute_child_tool", { server_id, tool_name: tool, arguments: args });
const status = (server_id: string) => gaggle.metaJson<Status>("get_child_status", { server_id });

describe.each([
  ["http_ok", "http"],
  ["sse_ok", "sse"],
])("%s (type = %s)", (name, transport) => {
  it("relays echo, structured content and non-text blocks", async () => {
    expect(await call(name, "echo", { text: `over ${transport}` })).toEqual({ content: [{ type: "text", text: `over ${transport}` }] });
    expect((await call(name, "add", { a: 1, b: 2 })).structuredContent).toEqual({ sum: 3 });
    const image = await call(name, "image");
    expect(image.content.map((block) => block.type)).toEqual(["image", "audio", "resource"]);
  });

  it("lists the remote server's tools through get_schema", async () => {
    const schema = await gaggle.metaJson<{ tools: Array<{ name: string }> }>("get_schema", { server_id: name });
    expect(schema.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["echo", "add", "lines", "env"]));
  });

  it("shows its transport and no pid in get_child_status", async () => {
    await call(name, "echo", { text: "x" });
    const s = await status(name);
    expect(s).toMatchObject({ server_id: name, status: "running", transport, pid: null });
    expect(s.calls_served).toBeGreaterThanOrEqual(1);
  });

  it("starts a new remote session after close_child_session", async () => {
    await call(name, "echo", { text: "before" });
    const closed = await gaggle.metaJson<{ status: string }>("close_child_session", { server_id: name });
    expect(closed.status).toBe("closed");
    expect((await status(name)).status).toBe("stopped");
    expect(textOf(await call(name, "echo", { text: "after" }))).toBe("after");
    expect((await status(name)).status).toBe("running");
  });
});

describe.each([
  ["http_bad", "http"],
  ["sse_bad", "sse"],
])("%s: a wrong header (type = %s)", (name, transport) => {
  it("fails the call with SERVER_FAILED, naming the child and what the server answered", async () => {
    const before = (server.stderr().match(/401 for/g) ?? []).length;
    const result = await call(name, "echo", { text: "x" });
    const body = failureOf(result);
    expect(body.code).toBe("SERVER_FAILED");
    expect(body.error).toContain(`${name} failed to start`);
    // The SDK's error (the status or the body of the 401) is what tells the user to check the headers.
    expect(body.error).toMatch(REFUSAL);
    // The value of the header may be a secret: it stays out of the message.
    expect(body.error).not.toContain(WRONG);
    // A remote child has no command, args or env: the hint should point at what it does have.
    expect(body.hint).toMatch(/url|headers/);
    expect((server.stderr().match(/401 for/g) ?? []).length).toBeGreaterThan(before);
    const s = await status(name);
    expect(s).toMatchObject({ status: "failed", transport, pid: null });
    expect(s.error).toMatch(REFUSAL);
  });
});

describe("header values from ${VAR}", () => {
  it.each(["http_var", "sse_var"])("%s sends the expanded value and is let in", async (name) => {
    expect(textOf(await call(name, "echo", { text: "expanded" }))).toBe("expanded");
  });
});
