import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, startGaggle, textOf, type RunningGaggle } from "../helpers/gaggle.js";
import { ROOT } from "../helpers/paths.js";

// Real servers published by the MCP project, run from node_modules exactly as a user would configure them.
const EVERYTHING = `${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
const FILESYSTEM = `${ROOT}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;

let gaggle: RunningGaggle;
let direct: Client;
// realpath: the filesystem server resolves symlinks (macOS /var -> /private/var) and compares against it.
const dir = realpathSync(mkdtempSync(join(tmpdir(), "gaggle-fs-")));
const ROWS = Array.from({ length: 100 }, (_, i) => `row ${i + 1}`);

const config = `
[mcp_servers.everything]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(EVERYTHING)}, "stdio"]

[mcp_servers.fs]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(FILESYSTEM)}, ${JSON.stringify(dir)}]
`;

beforeAll(async () => {
  writeFileSync(join(dir, "hundred.txt"), ROWS.join("\n") + "\n");
  writeFileSync(join(dir, "other.md"), "# other\n");
  gaggle = await startGaggle(config);
  // Declares what gaggle declares to its children, since servers such as this one offer tools by client capability.
  direct = new Client(
    { name: "gaggle-test-direct", version: "0.0.0" },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
  );
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], stderr: "pipe" }));
});
afterAll(async () => {
  await Promise.allSettled([gaggle?.close(), direct?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const call = (server: string, tool: string, args: Record<string, unknown> = {}, window: Record<string, number> = {}) =>
  gaggle.meta("execute_child_tool", { server_id: server, tool_name: tool, arguments: args, ...window });

describe("server-everything", () => {
  it("lists the same tools through get_schema as it does directly", async () => {
    const schema = await gaggle.metaJson<{ tools: Array<{ name: string; inputSchema: unknown }> }>("get_schema", {
      server_id: "everything",
    });
    const { tools } = await direct.listTools();
    expect(schema.tools.map((tool) => tool.name).sort()).toEqual(tools.map((tool) => tool.name).sort());
    expect(schema.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["echo", "get-tiny-image", "get-structured-content"]));
    const echo = schema.tools.find((tool) => tool.name === "echo")!;
    expect(echo.inputSchema).toEqual(tools.find((tool) => tool.name === "echo")!.inputSchema);
  });

  it("calls its echo tool", async () => {
    const result = await call("everything", "echo", { message: "hello from gaggle" });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("Echo: hello from gaggle");
  });

  it("passes an image result through exactly as a direct connection receives it", async () => {
    const viaGaggle = await call("everything", "get-tiny-image");
    const viaSdk = await direct.callTool({ name: "get-tiny-image", arguments: {} });
    expect(viaGaggle.content.map((block) => block.type)).toContain("image");
    expect(viaGaggle).toEqual(viaSdk);
  });

  it("passes structured content through exactly as a direct connection receives it", async () => {
    const args = { location: "Chicago" };
    const viaGaggle = await call("everything", "get-structured-content", args);
    const viaSdk = await direct.callTool({ name: "get-structured-content", arguments: args });
    expect(viaGaggle.structuredContent).toBeDefined();
    expect(viaGaggle.structuredContent).toEqual(JSON.parse(textOf(viaGaggle)));
    expect(viaGaggle).toEqual(viaSdk);
  });

  it("answers a read of a resource it does not have itself, and its JSON-RPC error passes through as it came", async () => {
    const uri = "demo://resource/static/document/no-such-document.md";
    const refusal = (read: Promise<unknown>) =>
      read.then(
        () => expect.unreachable("the read succeeded"),
        (error: { code: number; message: string; data?: unknown }) => ({ code: error.code, message: error.message, data: error.data }),
      );
    const viaSdk = await refusal(direct.readResource({ uri }));
    expect(viaSdk.code).toBe(-32602);
    expect(await refusal(gaggle.client.readResource({ uri }))).toEqual(viaSdk);
  });

  it("refuses arguments that break the tool's schema with INVALID_ARGS", async () => {
    const missing = failureOf(await call("everything", "echo", {}));
    expect(missing.code).toBe("INVALID_ARGS");
    expect(missing.error).toContain('missing required property "message"');
    expect(missing.hint).toContain('get_schema("everything", "echo")');
    const badEnum = failureOf(await call("everything", "get-structured-content", { location: "Paris" }));
    expect(badEnum.code).toBe("INVALID_ARGS");
    expect(badEnum.error).toContain("arguments.location");
    expect(badEnum.error).toContain("New York");
  });
});

describe("server-filesystem", () => {
  const file = join(dir, "hundred.txt");

  it("reads a whole file unchanged without head or tail", async () => {
    expect(textOf(await call("fs", "read_text_file", { path: file }))).toBe(ROWS.join("\n") + "\n");
  });

  it("cuts a file to head and tail lines and says how many were left out", async () => {
    expect(textOf(await call("fs", "read_text_file", { path: file }, { head: 3, tail: 2 }))).toBe(
      "row 1\nrow 2\nrow 3\n[... 95 lines omitted (of 100) ...]\nrow 99\nrow 100\n",
    );
    expect(textOf(await call("fs", "read_text_file", { path: file }, { head: 1 }))).toBe("row 1\n[... 99 lines omitted (of 100) ...]\n");
    expect(textOf(await call("fs", "read_text_file", { path: file }, { tail: 4 }))).toBe(
      "[... 96 lines omitted (of 100) ...]\nrow 97\nrow 98\nrow 99\nrow 100\n",
    );
  });

  it("cut with head, leaves out the whole structure beside the cut text, saying so", async () => {
    const whole = await call("fs", "directory_tree", { path: dir });
    expect(whole.structuredContent).toBeDefined();
    const cut = await call("fs", "directory_tree", { path: dir }, { head: 2 });
    expect(cut.structuredContent).toBeUndefined();
    expect(textOf(cut)).toMatch(/^(.*\n){2}\[\.\.\. \d+ lines omitted \(of \d+\) \.\.\.\]$/);
    expect(cut.content.at(-1)).toEqual({
      type: "text",
      text: "[structuredContent left out: the result was cut with head/tail; call again without them for all of it]",
    });
  });

  it("lists a directory", async () => {
    const result = await call("fs", "list_directory", { path: dir });
    expect(result.isError).toBeFalsy();
    expect(textOf(result).split("\n").sort()).toEqual(["[FILE] hundred.txt", "[FILE] other.md"]);
  });

  it("passes the server's own refusal of a path outside its allowed directories through as a tool error", async () => {
    const result = await call("fs", "read_text_file", { path: "/etc/hostname" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/access denied|outside allowed/i);
  });
});
