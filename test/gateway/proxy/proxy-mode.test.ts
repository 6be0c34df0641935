// Proxy mode: children's tools, prompts and resources offered directly, under exposed names, by gateway.expose and per child.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpError, ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { failureOf, startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { NO_BUILT_INS, fixtureChild } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";

const META_TOOLS = ["close_child_session", "execute_child_tool", "get_child_status", "get_schema", "list_registered_children", "search_tools"];
const ECHO_TOOLS = ["add", "add_tool", "echo", "env", "fail", "image", "lines", "pid", "progress", "sleep"];
const README_TEXT = "gaggle echo fixture: a test server, not a real one.";
/** 60 characters: with "__" and any tool name the exposed name is over 64. */
const LONG_PREFIX = "long_prefix_".padEnd(60, "x");

const toolsConfig = [
  '[gateway]\nexpose = "tools"\nlist_wait_ms = 30000\n',
  fixtureChild("echo", "echo.mjs", 'tools = { deny = ["env"] }'),
  fixtureChild("plain", "echo.mjs", 'prefix = ""'),
  fixtureChild("long", "echo.mjs", `prefix = "${LONG_PREFIX}"`),
].join("\n");

const gaggles: RunningGaggle[] = [];
const start = async (config: string) => {
  const gaggle = await startGaggle(config);
  gaggles.push(gaggle);
  return gaggle;
};
const toolNames = async (gaggle: RunningGaggle) => (await gaggle.client.listTools()).tools.map((tool) => tool.name).sort();
const call = async (gaggle: RunningGaggle, name: string, args: Record<string, unknown> = {}) =>
  (await gaggle.client.callTool({ name, arguments: args })) as CallToolResult;

let proxy: RunningGaggle;
let toolListChanges = 0;

beforeAll(async () => {
  proxy = await start(toolsConfig);
  proxy.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void toolListChanges++);
});
afterAll(async () => {
  await Promise.allSettled(gaggles.map((gaggle) => gaggle.close()));
});

describe("tools/list by expose mode", () => {
  it('expose = "tools" lists every child tool as <prefix>__<tool> and no meta-tools', async () => {
    const names = await toolNames(proxy);
    expect(names).toEqual(expect.arrayContaining([...ECHO_TOOLS.filter((tool) => tool !== "env").map((tool) => `echo__${tool}`), ...ECHO_TOOLS]));
    for (const meta of META_TOOLS) expect(names).not.toContain(meta);
    // An enabled built-in child is listed too, under its tools' own names: process is on by default.
    expect(names).toEqual(expect.arrayContaining(["gg_process_run", "gg_process_status", "gg_process_kill"]));
  });

  it("a config of built-in children only lists their tools in proxy mode, and validate counts them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "proxy-built-ins-"));
    const builtIns = await start(
      [
        '[gateway]\nexpose = "tools"\nlist_wait_ms = 30000\n',
        NO_BUILT_INS,
        `[virtual.workspace]\nenabled = true\nroots = [${JSON.stringify(dir)}]\n`,
      ].join("\n"),
    );
    expect(await toolNames(builtIns)).toEqual(["Bash", "Edit", "GlobTool", "GrepTool", "LS", "Replace", "View"]);
    writeFileSync(join(dir, "note.txt"), "listed\n");
    expect(textOf(await call(builtIns, "View", { file_path: join(dir, "note.txt"), show_line_numbers: false }))).toContain("listed");
  });

  it("a failure's hint names no meta-tool where none is listed: the error carries the child's last stderr lines", async () => {
    const crashing = await start(
      ['[gateway]\nexpose = "tools"\nlist_wait_ms = 30000\n', NO_BUILT_INS, fixtureChild("crashy", "crash.mjs")].join("\n"),
    );
    const failed = failureOf(await call(crashing, "crashy__crash", { after_ms: 10 }));
    expect(failed).toMatchObject({ code: "SERVER_FAILED", hint: "the next call restarts crashy" });
    expect(failed.error).toContain("crash fixture: about to die");
  });

  it("a built-in child with expose = false stays behind the meta-tools, which are listed for it", async () => {
    const quiet = await start(
      ['[gateway]\nexpose = "tools"\nlist_wait_ms = 30000\n', "[virtual.process]\nexpose = false\n", fixtureChild("echo", "echo.mjs")].join("\n"),
    );
    const names = await toolNames(quiet);
    expect(names.filter((name) => name.startsWith("gg_process_"))).toEqual([]);
    expect(names).toEqual(expect.arrayContaining(META_TOOLS));
    const viaMeta = await call(quiet, "execute_child_tool", { server_id: "process", tool_name: "gg_process_status", arguments: {} });
    expect(viaMeta.isError).toBeFalsy();
  });

  it("a built-in child with its own expose = true is listed under its tools' own names", async () => {
    const process = await start(
      ['[gateway]\nexpose = "tools"\nlist_wait_ms = 30000\n', "[virtual.process]\nexpose = true\n", fixtureChild("echo", "echo.mjs")].join("\n"),
    );
    expect(await toolNames(process)).toEqual(expect.arrayContaining(["gg_process_run", "gg_process_status", "gg_process_kill"]));
  });

  it('expose = "both" lists the meta-tools and the child tools', async () => {
    const both = await start(['[gateway]\nexpose = "both"\nlist_wait_ms = 30000\n', NO_BUILT_INS, fixtureChild("echo", "echo.mjs")].join("\n"));
    expect(await toolNames(both)).toEqual([...META_TOOLS, ...ECHO_TOOLS.map((tool) => `echo__${tool}`)].sort());
  });

  it('expose = "meta" lists only the meta-tools, plus the tools of a child that sets its own expose = "tools"', async () => {
    const meta = await start(
      [
        "[gateway]\nlist_wait_ms = 30000\n",
        NO_BUILT_INS,
        fixtureChild("echo", "echo.mjs"),
        fixtureChild("proxied", "echo.mjs", 'expose = "tools"'),
      ].join("\n"),
    );
    expect(await toolNames(meta)).toEqual([...META_TOOLS, ...ECHO_TOOLS.map((tool) => `proxied__${tool}`)].sort());
    expect(textOf(await call(meta, "proxied__echo", { text: "direct" }))).toBe("direct");
  });

  it('a child with expose = "meta" under gateway expose = "tools" stays behind the meta-tools', async () => {
    const mixed = await start(
      [
        '[gateway]\nexpose = "tools"\nlist_wait_ms = 30000\n',
        NO_BUILT_INS,
        fixtureChild("echo", "echo.mjs"),
        fixtureChild("quiet", "echo.mjs", 'expose = "meta"'),
      ].join("\n"),
    );
    expect(await toolNames(mixed)).toEqual([...META_TOOLS, ...ECHO_TOOLS.map((tool) => `echo__${tool}`)].sort());
    const viaMeta = await call(mixed, "execute_child_tool", { server_id: "quiet", tool_name: "echo", arguments: { text: "still here" } });
    expect(textOf(viaMeta)).toBe("still here");
    await expect(call(mixed, "quiet__echo", { text: "x" })).rejects.toThrow(/Unknown tool: quiet__echo/);
  });
});

describe("calling proxied tools", () => {
  it("<child>__<tool> returns the child's result unchanged", async () => {
    expect(await call(proxy, "echo__echo", { text: "through the proxy" })).toEqual({ content: [{ type: "text", text: "through the proxy" }] });
    expect(await call(proxy, "echo__add", { a: 1, b: 2 })).toEqual({ content: [{ type: "text", text: '{"sum":3}' }], structuredContent: { sum: 3 } });
  });

  it('prefix = "" exposes the child\'s tool names unchanged', async () => {
    expect(textOf(await call(proxy, "echo", { text: "no prefix" }))).toBe("no prefix");
  });

  it('two children with prefix = "" and a tool name in common: it is listed once, and the log names both', async () => {
    const gaggle = await start(
      [
        '[gateway]\nexpose = "tools"\nlist_wait_ms = 30000\n',
        NO_BUILT_INS,
        fixtureChild("one", "echo.mjs", 'prefix = ""'),
        fixtureChild("two", "echo.mjs", 'prefix = ""'),
      ].join("\n"),
    );
    expect(await toolNames(gaggle)).toEqual(ECHO_TOOLS);
    // Read as JSON, a log line keeps one value per key: the logger's name stays "gaggle", the tool has a key of its own.
    const collision = await until(
      () =>
        gaggle
          .stderr()
          .split("\n")
          .filter((line) => line.includes("tool name collision"))
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .find((record) => record.tool === "echo"),
      (record) => record !== undefined,
    );
    expect(collision).toMatchObject({ name: "gaggle", tool: "echo", children: ["one", "two"] });
  });

  it("shortens a name over 64 characters deterministically, keeps it callable, and gives the same name on the next run", async () => {
    const longNames = (names: string[]) => names.filter((name) => name.startsWith(LONG_PREFIX.slice(0, 20)));
    const first = longNames(await toolNames(proxy));
    expect(first).toHaveLength(ECHO_TOOLS.length);
    expect(new Set(first).size).toBe(first.length);
    for (const name of first) expect(name).toMatch(/^long_prefix_x+.*_[0-9a-f]{8}$/);
    for (const name of first) expect(name.length).toBeLessThanOrEqual(64);

    const second = await start(toolsConfig);
    expect(longNames(await toolNames(second))).toEqual(first);
    await second.close();

    // The shortened name no longer says which tool it is: find echo by its title, then call it.
    const { tools } = await proxy.client.listTools();
    const echo = tools.find((tool) => first.includes(tool.name) && tool.title === "Echo");
    expect(echo).toBeDefined();
    expect(textOf(await call(proxy, echo!.name, { text: "long way round" }))).toBe("long way round");
  });

  it("hides tools denied by tools.deny: absent from tools/list and refused when called", async () => {
    expect(await toolNames(proxy)).not.toContain("echo__env");
    const refused = call(proxy, "echo__env", { name: "HOME" });
    await expect(refused).rejects.toBeInstanceOf(McpError);
    await expect(refused).rejects.toMatchObject({ code: -32602 });
  });

  it("answers an unknown tool name with a JSON-RPC invalid-params error", async () => {
    const unknown = call(proxy, "nobody__nothing");
    await expect(unknown).rejects.toMatchObject({ code: -32602 });
    await expect(unknown).rejects.toThrow(/Unknown tool: nobody__nothing; tools\/list shows/);
    await expect(call(proxy, "echo__ecoh")).rejects.toThrow(/Unknown tool: echo__ecoh; did you mean "echo__echo"\? tools\/list shows/);
  });

  it("answers a name under the prefix of a child that failed to start with the child's failure, and the command that shows it", async () => {
    const failing = await start(['[gateway]\nexpose = "tools"\n', NO_BUILT_INS, fixtureChild("broken", "exit-at-start.mjs")].join("\n"));
    const unknown = call(failing, "broken__anything");
    await expect(unknown).rejects.toMatchObject({ code: -32602 });
    await expect(unknown).rejects.toThrow(
      /Unknown tool: broken__anything; its child broken has not listed its tools: failed to start: exited \(code 1\).* `gaggle doctor broken` starts it/,
    );
  });

  it("points a failed call to tools/list, where no meta-tool is listed to name", async () => {
    const bad = failureOf(await call(proxy, "echo__add", { a: 1 }));
    expect(bad).toMatchObject({ code: "INVALID_ARGS", hint: "tools/list gives its input schema" });
  });
});

describe("resources and prompts", () => {
  it("lists a child's resource with its URI unchanged and reads it from the child", async () => {
    const { resources } = await proxy.client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(expect.arrayContaining(["mcp://server_summary", "fixture://readme"]));
    const { contents } = await proxy.client.readResource({ uri: "fixture://readme" });
    expect(contents).toEqual([{ uri: "fixture://readme", mimeType: "text/plain", text: README_TEXT }]);
  });

  it("lists a child's resource templates and reads a URI that matches one", async () => {
    const { resourceTemplates } = await proxy.client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toContain("fixture://items/{id}");
    const { contents } = await proxy.client.readResource({ uri: "fixture://items/42" });
    expect(contents).toEqual([{ uri: "fixture://items/42", mimeType: "text/plain", text: "item 42" }]);
  });

  it("lists prompts as <prefix>__<prompt> and gets one from its child", async () => {
    const { prompts } = await proxy.client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(expect.arrayContaining(["echo__greet", "greet"]));
    const prompt = await proxy.client.getPrompt({ name: "echo__greet", arguments: { name: "Ada" } });
    expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Hello, Ada!" } }]);
  });
});

describe("list_changed", () => {
  it("sends notifications/tools/list_changed when a child adds a tool, and lists and calls the new tool", async () => {
    const before = toolListChanges;
    expect(textOf(await call(proxy, "echo__add_tool", { name: "late_tool" }))).toBe("added late_tool");
    expect(
      await until(
        () => toolListChanges,
        (count) => count > before,
      ),
    ).toBeGreaterThan(before);
    expect(await toolNames(proxy)).toContain("echo__late_tool");
    expect(textOf(await call(proxy, "echo__late_tool"))).toBe("late_tool called");
  });
});
