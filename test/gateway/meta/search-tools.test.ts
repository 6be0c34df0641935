// search_tools over real gateways: ranked hits ready for execute_child_tool, from the tools known without starting
// a child (the catalog of its last run); `gateway.expose = "search"` lists only the search and the call.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { failureOf, startGaggle, textOf } from "../../helpers/gaggle.js";
import { fixtureChild, NO_BUILT_INS, ROOT } from "../../helpers/paths.js";

/** The cwd is part of a child's definition, and each run's config is written to a new folder: these name theirs. */
const echo = fixtureChild("echo", "echo.mjs", `cwd = ${JSON.stringify(ROOT)}`);

interface Found {
  hits: Array<{ server_id: string; tool_name: string; description: string; input_schema: unknown }>;
  searched: { children: number; tools: number };
  not_searched?: { children: string[] };
}

describe("search_tools", () => {
  it("in search mode: the only tools listed are search_tools and execute_child_tool, and a hit is called as found", async () => {
    const gaggle = await startGaggle([`[gateway]\nexpose = "search"\n`, NO_BUILT_INS, echo].join("\n"), {
      env: { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), "search-state-")) },
    });
    try {
      const { tools } = await gaggle.client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(["execute_child_tool", "search_tools"]);
      // Only what the model can call is named: get_schema and list_registered_children are not listed here.
      expect(JSON.stringify(tools)).not.toMatch(/get_schema|list_registered_children|get_child_status/);
      expect(JSON.stringify(tools)).toContain("from a search_tools hit");
      // So do the instructions the client is given at the start.
      const instructions = gaggle.client.getInstructions();
      expect(instructions).toContain("search_tools(query)");
      expect(instructions).not.toMatch(/get_schema|list_registered_children/);
      // The child the catalog did not know was started with gaggle, so that it can be searched.
      await expect
        .poll(async () => (await gaggle.metaJson<Found>("search_tools", { query: "add two numbers" })).hits[0]?.tool_name, { timeout: 10_000 })
        .toBe("add");
      const found = await gaggle.metaJson<Found>("search_tools", { query: "add two numbers", limit: 1 });
      expect(found.hits).toEqual([
        {
          server_id: "echo",
          tool_name: "add",
          description: "Adds two numbers; structured output {sum}.",
          input_schema: expect.objectContaining({ type: "object", required: ["a", "b"] }),
          score: expect.any(Number),
        },
      ]);
      const sum = (await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "add", arguments: { a: 2, b: 3 } })) as CallToolResult;
      expect(JSON.parse(textOf(sum))).toEqual({ sum: 5 });
      // A failure's hint names search_tools, the one way here to learn a tool's input schema.
      const bad = failureOf(
        (await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "add", arguments: { a: 2 } })) as CallToolResult,
      );
      expect(bad).toMatchObject({ code: "INVALID_ARGS", hint: 'search_tools(query, server_id: "echo") finds it with its input_schema' });
      const unknown = failureOf((await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "ad" })) as CallToolResult);
      expect(unknown.hint).toBe('did you mean "add"? search_tools(query, server_id: "echo") finds its tools');
    } finally {
      await gaggle.close();
    }
  });

  it("in meta mode starts no child: it searches the catalog of the last run, and names the children nobody knows yet", async () => {
    const state = mkdtempSync(join(tmpdir(), "search-state-"));
    const config = [NO_BUILT_INS, echo, fixtureChild("never", "echo.mjs")].join("\n");
    const first = await startGaggle(config, { env: { XDG_STATE_HOME: state } });
    const before = await first.metaJson<Found>("search_tools", { query: "environment variable" });
    expect(before.hits).toEqual([]);
    expect(before.not_searched?.children).toEqual(["echo", "never"]);
    await first.meta("get_schema", { server_id: "echo" });
    await first.close();

    const second = await startGaggle(config, { env: { XDG_STATE_HOME: state } });
    try {
      const found = await second.metaJson<Found>("search_tools", { query: "environment variable" });
      expect(found.hits[0]).toMatchObject({ server_id: "echo", tool_name: "env" });
      expect(found.searched).toEqual({ children: 1, tools: 10 });
      expect(found.not_searched?.children).toEqual(["never"]);
      for (const server_id of ["echo", "never"]) {
        expect((await second.metaJson<{ status: string }>("get_child_status", { server_id })).status).toBe("not_started");
      }
      expect((await second.metaJson<Found>("search_tools", { query: "environment", server_id: "never" })).hits).toEqual([]);
      expect(failureOf((await second.meta("search_tools", { query: "x", server_id: "ecoh" })) as CallToolResult)).toMatchObject({
        code: "SERVER_NOT_FOUND",
        hint: expect.stringContaining('did you mean "echo"?'),
      });
    } finally {
      await second.close();
    }
  });

  it("in search mode, the first search waits for a child gaggle is starting, and finds its tools", async () => {
    // The child takes a second to start: the search is made before it runs, and answered once it does.
    const slow = fixtureChild("slow", "many-tools.mjs", `env = { START_DELAY_MS = "1000" }`);
    const gaggle = await startGaggle([`[gateway]\nexpose = "search"\nlist_wait_ms = 10000\n`, NO_BUILT_INS, slow].join("\n"), {
      env: { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), "search-state-")) },
    });
    try {
      const found = await gaggle.metaJson<Found>("search_tools", { query: "echoes the text", limit: 1 });
      expect(found.hits[0]).toMatchObject({ server_id: "slow", tool_name: expect.stringMatching(/^tool_/) });
      expect(found.not_searched).toBeUndefined();
    } finally {
      await gaggle.close();
    }
  });

  it("in search mode, a child that failed to start is named with why, not as one to search again in a moment", async () => {
    const broken = fixtureChild("broken", "exit-at-start.mjs", `cwd = ${JSON.stringify(ROOT)}`);
    const gaggle = await startGaggle([`[gateway]\nexpose = "search"\nlist_wait_ms = 10000\n`, NO_BUILT_INS, echo, broken].join("\n"), {
      env: { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), "search-state-")) },
    });
    try {
      const found = await gaggle.metaJson<Found & { failed?: Array<{ server_id: string; error: string; stderr: string[] }> }>("search_tools", {
        query: "echo",
      });
      expect(found.hits[0]).toMatchObject({ server_id: "echo" });
      expect(found.not_searched).toBeUndefined();
      expect(found.failed).toEqual([
        { server_id: "broken", error: "failed to start: exited (code 1)", stderr: expect.arrayContaining(["fatal: FIXTURE_API_KEY is not set"]) },
      ]);
      // With only the broken child asked for, nothing could be ranked: the search says why, not to wait.
      const alone = await gaggle.metaJson<Found & { cold?: string }>("search_tools", { query: "echo", server_id: "broken" });
      expect(alone.hits).toEqual([]);
      expect(alone.cold).toBe("no child whose tools are learned by running it could start, so there is nothing to rank: failed says why");
    } finally {
      await gaggle.close();
    }
  });

  it("a cold search, with only built-in children known, says so instead of ranking their tools", async () => {
    const gaggle = await startGaggle(["[virtual.goose]\nenabled = false\n[virtual.team]\nenabled = false\n", echo].join("\n"), {
      env: { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), "search-state-")) },
    });
    try {
      const cold = await gaggle.metaJson<Found & { cold?: string }>("search_tools", { query: "run a command in the background" });
      expect(cold.hits).toEqual([]);
      expect(cold.cold).toContain("nothing to rank");
      expect(cold.cold).toContain("get_schema(server_id) starts one");
      expect(cold.not_searched?.children).toEqual(["echo"]);
      // Once a configured child has run, the built-in tools are ranked with its own.
      await gaggle.meta("get_schema", { server_id: "echo" });
      const warm = await gaggle.metaJson<Found & { cold?: string }>("search_tools", { query: "run a command in the background" });
      expect(warm.cold).toBeUndefined();
      expect(warm.hits[0]).toMatchObject({ server_id: "process", tool_name: "gg_process_run" });
    } finally {
      await gaggle.close();
    }
  });

  it("asks a running child that announced a change for its tools again: a tool it just added is found", async () => {
    const gaggle = await startGaggle([NO_BUILT_INS, echo].join("\n"), { env: { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), "search-state-")) } });
    try {
      await gaggle.meta("execute_child_tool", { server_id: "echo", tool_name: "add_tool", arguments: { name: "translate_to_klingon" } });
      // The child's list_changed dropped the list gaggle had; nobody has listed since.
      const found = await gaggle.metaJson<Found>("search_tools", { query: "klingon" });
      expect(found.hits.map((hit) => hit.tool_name)).toEqual(["translate_to_klingon"]);
      expect(found.searched).toEqual({ children: 1, tools: 11 });
    } finally {
      await gaggle.close();
    }
  });
});
