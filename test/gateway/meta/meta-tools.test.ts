import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, readJsonResource, startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { fixture, fixtureChild, NO_BUILT_INS } from "../../helpers/paths.js";

let gaggle: RunningGaggle;

const config = [
  NO_BUILT_INS,
  fixtureChild("echo", "echo.mjs", 'description = "the echo fixture"'),
  fixtureChild("filtered", "echo.mjs", 'tools = { allow = ["e*", "lines", "fail", "lnes"], deny = ["env", "pidd"] }'),
].join("\n");

beforeAll(async () => {
  gaggle = await startGaggle(config);
});
afterAll(async () => {
  await gaggle.close();
});

describe("tools/list", () => {
  it("lists exactly the six meta-tools", async () => {
    const { tools } = await gaggle.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "close_child_session",
      "execute_child_tool",
      "get_child_status",
      "get_schema",
      "list_registered_children",
      "search_tools",
    ]);
    const execute = tools.find((tool) => tool.name === "execute_child_tool")!;
    expect(execute.inputSchema.required).toEqual(["server_id", "tool_name"]);
    expect(Object.keys(execute.inputSchema.properties ?? {})).toEqual(["server_id", "tool_name", "arguments", "head", "tail"]);
  });
});

describe("list_registered_children", () => {
  it("names every child with a count", async () => {
    const listed = await gaggle.metaJson<{ children: string[]; count: number }>("list_registered_children");
    expect(listed).toEqual({ children: ["echo", "filtered"], count: 2 });
  });
});

describe("execute_child_tool", () => {
  it("returns the child's text unchanged", async () => {
    const result = await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "echo", arguments: { text: "hi there" } });
    expect(result).toEqual({ content: [{ type: "text", text: "hi there" }] });
  });

  it("passes structuredContent through", async () => {
    const result = await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "add", arguments: { a: 2, b: 3.5 } });
    expect(result.structuredContent).toEqual({ sum: 5.5 });
    expect(textOf(result)).toBe('{"sum":5.5}');
  });

  it("passes image, audio and resource blocks through byte for byte", async () => {
    const result = await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "image" });
    expect(result.content.map((block) => block.type)).toEqual(["image", "audio", "resource"]);
    const [image, audio, resource] = result.content as Array<Record<string, unknown>>;
    // The very bytes the fixture sends, read from the fixture itself.
    const sent = (await import(pathToFileURL(fixture("lib/echo-server.mjs")).href)) as { PNG_1X1_BASE64: string; WAV_BASE64: string };
    expect(image).toEqual({ type: "image", mimeType: "image/png", data: sent.PNG_1X1_BASE64 });
    expect(audio).toEqual({ type: "audio", mimeType: "audio/wav", data: sent.WAV_BASE64 });
    expect(resource).toMatchObject({ resource: { uri: "fixture://readme" } });
  });

  it("passes a child's isError result through as the child wrote it", async () => {
    const result = await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "fail", arguments: { message: "nope" } });
    expect(result).toEqual({ isError: true, content: [{ type: "text", text: "nope" }] });
  });

  it("cuts text to head and tail lines and says how many were left out", async () => {
    const call = (window: Record<string, number>) =>
      gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "lines", arguments: { count: 10 }, ...window });
    expect(textOf(await call({ head: 2, tail: 3 }))).toBe("line 1\nline 2\n[... 5 lines omitted (of 10) ...]\nline 8\nline 9\nline 10");
    expect(textOf(await call({ head: 3 }))).toBe("line 1\nline 2\nline 3\n[... 7 lines omitted (of 10) ...]");
    expect(textOf(await call({ tail: 1 }))).toBe("[... 9 lines omitted (of 10) ...]\nline 10");
    expect(textOf(await call({ head: 6, tail: 6 }))).toBe(Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
  });

  it("refuses arguments that do not fit the input schema before they reach the child", async () => {
    const before = await gaggle.metaJson<{ stderr: string[] }>("get_child_status", { server_id: "echo" });
    const body = failureOf(await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "add", arguments: { a: "two", c: 1 } }));
    expect(body.code).toBe("INVALID_ARGS");
    expect(body.error).toContain('arguments.a: must be number, got string "two"');
    expect(body.error).toContain('missing required property "b"');
    expect(body.hint).toContain('get_schema("echo", "add")');
    const after = await gaggle.metaJson<{ stderr: string[] }>("get_child_status", { server_id: "echo" });
    expect(after.stderr.filter((line) => line === "call add")).toEqual(before.stderr.filter((line) => line === "call add"));
  });

  it("names the nearest child when the server does not exist", async () => {
    const body = failureOf(await gaggle.meta("execute_child_tool", { server_id: "ecko", tool_name: "echo" }));
    expect(body.code).toBe("SERVER_NOT_FOUND");
    expect(body.error).toBe('no child server named "ecko"');
    expect(body.hint).toContain('did you mean "echo"?');
  });

  it("names the nearest tool when the tool does not exist", async () => {
    const body = failureOf(await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "ecko" }));
    expect(body.code).toBe("TOOL_NOT_FOUND");
    expect(body.hint).toContain('did you mean "echo"?');
    expect(body.hint).toContain('get_schema("echo")');
  });

  it("treats tools hidden by allow/deny as absent", async () => {
    const schema = await gaggle.metaJson<{ tools: Array<{ name: string }> }>("get_schema", { server_id: "filtered" });
    expect(schema.tools.map((tool) => tool.name).sort()).toEqual(["echo", "fail", "lines"]);
    const body = failureOf(await gaggle.meta("execute_child_tool", { server_id: "filtered", tool_name: "env", arguments: { name: "HOME" } }));
    expect(body).toMatchObject({
      code: "TOOL_NOT_FOUND",
      error: `filtered offers no tool "env": the config's mcp_servers.filtered.tools.deny leaves it out`,
      hint: "change mcp_servers.filtered.tools.deny to offer it",
    });
    const unlisted = failureOf(await gaggle.meta("execute_child_tool", { server_id: "filtered", tool_name: "pid" }));
    expect(unlisted.error).toBe(`filtered offers no tool "pid": the config's mcp_servers.filtered.tools.allow leaves it out`);
    // A tool the child does not have is only absent.
    expect(failureOf(await gaggle.meta("execute_child_tool", { server_id: "filtered", tool_name: "nothing_like_it" })).error).toBe(
      'filtered has no tool named "nothing_like_it"',
    );
  });

  it("warns once of each allow or deny glob that matches none of the child's tools, naming the nearest", async () => {
    await gaggle.metaJson("get_schema", { server_id: "filtered" });
    await gaggle.metaJson("get_schema", { server_id: "filtered" });
    const warnings = gaggle
      .stderr()
      .split("\n")
      .filter((line) => line.includes("which matches none of"));
    expect(warnings).toEqual([
      expect.stringContaining(
        'mcp_servers.filtered.tools.allow holds \\"lnes\\", which matches none of the 10 tools filtered lists; did you mean \\"lines\\"?',
      ),
      expect.stringContaining(
        'mcp_servers.filtered.tools.deny holds \\"pidd\\", which matches none of the 10 tools filtered lists; did you mean \\"pid\\"?',
      ),
    ]);
  });

  it("refuses malformed meta-tool arguments with INVALID_ARGS", async () => {
    const body = failureOf(await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "echo", head: -1, extra: 1 }));
    expect(body.code).toBe("INVALID_ARGS");
    expect(body.error).toBe('invalid arguments for execute_child_tool: arguments: unexpected property "extra"; arguments.head: must be >= 0');
    expect(body.hint).toBe("see the input schema of execute_child_tool in tools/list");
    const missing = failureOf(await gaggle.meta("get_child_status", { server_id: 7 }));
    expect(missing.error).toBe("invalid arguments for get_child_status: arguments.server_id: must be string, got number 7");
    const numbered = failureOf(await gaggle.meta("execute_child_tool", { server_id: 5, tool_name: "echo" }));
    expect(numbered.error).toBe("invalid arguments for execute_child_tool: arguments.server_id: must be string, got number 5");
    const empty = failureOf(await gaggle.meta("get_schema", { server_id: "" }));
    expect(empty.error).toBe("invalid arguments for get_schema: arguments.server_id: must NOT have fewer than 1 characters");
  });
});

describe("get_schema", () => {
  it("returns tools with schemas and annotations, resources, templates and prompts", async () => {
    const schema = await gaggle.metaJson<Record<string, Array<Record<string, unknown>>>>("get_schema", { server_id: "echo" });
    const echo = schema.tools!.find((tool) => tool.name === "echo")!;
    expect(echo).toMatchObject({
      title: "Echo",
      description: "Returns its text argument unchanged.",
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
      annotations: { readOnlyHint: true },
    });
    expect(schema.tools!.find((tool) => tool.name === "add")).toHaveProperty("outputSchema");
    expect(schema.resources!.map((resource) => resource.uri)).toContain("fixture://readme");
    expect(schema.resource_templates!.map((template) => template.uriTemplate)).toContain("fixture://items/{id}");
    expect(schema.prompts!.map((prompt) => prompt.name)).toContain("greet");
  });

  it("returns one tool when tool_name is given", async () => {
    const answer = await gaggle.metaJson<{ server_id: string; tool: { name: string } }>("get_schema", {
      server_id: "echo",
      tool_name: "lines",
    });
    expect(answer.server_id).toBe("echo");
    expect(answer.tool.name).toBe("lines");
  });

  it("sees tools a child adds at runtime after its list_changed notification", async () => {
    await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "add_tool", arguments: { name: "late_tool" } });
    // The notification races the answer; the cache is dropped as soon as it arrives.
    let names: string[] = [];
    for (let attempt = 0; attempt < 50 && !names.includes("late_tool"); attempt++) {
      const schema = await gaggle.metaJson<{ tools: Array<{ name: string }> }>("get_schema", { server_id: "echo" });
      names = schema.tools.map((tool) => tool.name);
    }
    expect(names).toContain("late_tool");
    const result = await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "late_tool" });
    expect(textOf(result)).toBe("late_tool called");
  });
});

describe("resources", () => {
  it("lists and reads mcp://server_summary and mcp://children_servers", async () => {
    const { resources } = await gaggle.client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(["mcp://server_summary", "mcp://children_servers"]);
    const body = await readJsonResource(gaggle.client, "mcp://server_summary");
    expect(body.total_children).toBe(2);
    expect(body).toMatchObject({ config_path: expect.stringMatching(/children_config\.toml$/) });
    expect(body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(body.active_sessions).toBeGreaterThanOrEqual(1);
  });

  it("answers an unknown resource with the spec's not-found error", async () => {
    await expect(gaggle.client.readResource({ uri: "mcp://nope" })).rejects.toThrow(/-32002.*Resource not found/);
  });
});
