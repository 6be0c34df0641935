// The goose child's place in gaggle, and the end of goslings: release, terminate_all, close, and gaggle's own exit.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { startGaggle, textOf } from "../../helpers/gaggle.js";
import { fixtureChild } from "../../helpers/paths.js";
import { until } from "../../helpers/poll.js";
import { descendants, waitGone } from "../../helpers/processes.js";
import { failureOf, gooseConfig, idOf, startGooseGaggle, type GooseGaggle } from "./helpers.js";

let goose: GooseGaggle | undefined;
afterEach(async () => {
  await goose?.gaggle.close();
  goose = undefined;
});

/** Waits until the fake has started `count` runs, and every grandchild asked for. */
async function started(goose: GooseGaggle, count: number, grandchildren = 0): Promise<number[]> {
  await until(goose.runs, (runs) => runs.filter((run) => run.argv).length >= count && runs.filter((run) => run.grandchild).length >= grandchildren);
  return goose.pids();
}

describe("the goose child in gaggle", () => {
  it("is a registered child with its tools and resources", async () => {
    goose = await startGooseGaggle();
    const children = await goose.gaggle.metaJson<{ children: string[] }>("list_registered_children");
    expect(children.children).toContain("goose");
    const schema = await goose.gaggle.metaJson<{
      tools: Array<{ name: string; inputSchema: { additionalProperties: boolean } }>;
      resource_templates?: unknown;
    }>("get_schema", { server_id: "goose" });
    expect(schema.tools.map((tool) => tool.name)).toEqual([
      "run_goose",
      "list_goslings",
      "get_gosling_output",
      "get_gosling_status",
      "send_prompt_to_gosling",
      "release_gosling",
      "terminate_all_goslings",
      "dispatch_agent",
    ]);
    expect(schema.tools.every((tool) => tool.inputSchema.additionalProperties === false)).toBe(true);
    const status = await goose.gaggle.metaJson<{ status: string; transport: string }>("get_child_status", { server_id: "goose" });
    expect(status).toMatchObject({ status: "running", transport: "virtual" });
  });

  it("with [virtual.goose] expose = true, lists its tools under their own names", async () => {
    goose = await startGooseGaggle("expose = true");
    const { tools } = await goose.gaggle.client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["execute_child_tool", "run_goose", "get_gosling_output", "dispatch_agent"]));
    const result = (await goose.gaggle.client.callTool({ name: "run_goose", arguments: { prompt: "direct" } })) as CallToolResult;
    const id = idOf(textOf(result));
    await goose.settle(id);
    const { resources } = await goose.gaggle.client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(expect.arrayContaining(["goslings://list", `goslings://${id}/output`]));
  });

  it("without Goose installed, leaves the goose child out unless enabled = true asks for it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-"));
    const gaggle = await startGaggle(gooseConfig(dir, `command = "goose-not-installed-here"`));
    try {
      const { children } = await gaggle.metaJson<{ children: string[] }>("list_registered_children");
      expect(children).not.toContain("goose");
      expect(children).not.toContain("team");
      await expect.poll(() => gaggle.stderr()).toContain("the goose child is left out: its command is not found");
    } finally {
      await gaggle.close();
    }
  });

  it("says once that the goose and team children are left out, not again at each reload that leaves them out alike", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-"));
    const config = gooseConfig(dir, `command = "goose-not-installed-here"`);
    const gaggle = await startGaggle(config);
    try {
      await expect.poll(() => gaggle.stderr()).toContain("the team child is left out");
      for (const name of ["one", "two"]) {
        writeFileSync(gaggle.configPath, `${config}\n${fixtureChild(name, "echo.mjs")}`);
        await until(
          () => gaggle.metaJson<{ children: string[] }>("list_registered_children"),
          ({ children }) => children.includes(name),
        );
      }
      const said = (text: string) => gaggle.stderr().split(text).length - 1;
      expect(said("the goose child is left out: its command is not found")).toBe(1);
      expect(said("the team child is left out: its members are goslings or ACP agents")).toBe(1);
    } finally {
      await gaggle.close();
    }
  });

  it("with enabled = true starts without Goose installed, says so, and run_goose says how to install it or set command", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gaggle-goose-"));
    for (const command of ["goose-not-installed-here", join(dir, "no", "goose")]) {
      const gaggle = await startGaggle(gooseConfig(dir, `enabled = true\ncommand = ${JSON.stringify(command)}`));
      try {
        expect((await gaggle.metaJson<{ children: string[] }>("list_registered_children")).children).toContain("goose");
        const result = await gaggle.meta("execute_child_tool", { server_id: "goose", tool_name: "run_goose", arguments: { prompt: "x" } });
        const failure = failureOf(result);
        expect(failure).toMatchObject({ code: "SERVER_FAILED", error: `cannot start Goose: "${command}" was not found` });
        expect(failure.hint).toContain("install the Goose CLI (https://block.github.io/goose/docs/getting-started/installation)");
        expect(failure.hint).toContain("set [virtual.goose] command");
        expect(textOf(await gaggle.meta("execute_child_tool", { server_id: "goose", tool_name: "list_goslings" }))).toContain("Found 0 goslings");
        expect(gaggle.stderr()).toContain("[virtual.goose] is enabled, but its command is not found");
      } finally {
        await gaggle.close();
      }
    }
  });

  it("with [virtual.goose] enabled = false, there is no goose child", async () => {
    goose = await startGooseGaggle("enabled = false");
    expect((await goose.gaggle.metaJson<{ children: string[] }>("list_registered_children")).children).not.toContain("goose");
  });
});

describe("the end of goslings", () => {
  it("release_gosling stops a working gosling and its grandchildren; its transcript stays readable", async () => {
    goose = await startGooseGaggle();
    const id = await goose.run("[hang] [grandchild] [ignore-term]");
    const pids = await started(goose, 1, 1);
    await until(
      () => goose!.text("get_gosling_output", { process_id: id }),
      (text) => text.includes("for ever"),
    );
    const released = await goose.text("release_gosling", { process_id: id });
    expect(released).toMatch(new RegExp(`^Released gosling ${id}\\. It was working; its turn was stopped after \\d+\\.\\ds of work in all\\.`));
    expect(released).toContain(`goslings://${id}/output`);
    expect(await waitGone(pids)).toEqual([]);
    const output = await goose.text("get_gosling_output", { process_id: id });
    expect(output).toContain("Status: released");
    expect(output).toContain("Working on it, for ever.");
    expect(output).toContain("[error] stopped: released with release_gosling");
    expect(output).toMatch(/<<< \[prompt 1\] cancelled after \d+\.\ds\n=== released: released with release_gosling ===/);
    expect(await goose.text("release_gosling", { process_id: id })).toContain("was already released");
    expect(await goose.text("list_goslings", { status: "released" })).toContain(`ID: ${id}`);
  });

  it("terminate_all_goslings releases every gosling and leaves no process", async () => {
    goose = await startGooseGaggle();
    const idle = await goose.run("quick");
    await goose.settle(idle);
    const a = await goose.run("[hang] [grandchild]");
    const b = await goose.run("[hang]");
    await goose.text("send_prompt_to_gosling", { process_id: b, prompt: "queued, never run" });
    const pids = await started(goose, 3, 1);
    // The fake records its run before it speaks: wait for the words the transcript must keep after termination.
    await until(
      () => goose!.text("get_gosling_output", { process_id: a }),
      (output) => output.includes("Working on it, for ever."),
    );
    const text = await goose.text("terminate_all_goslings");
    expect(text).toBe("Terminated 3 goslings (2 working, 1 idle). Their transcripts stay readable with get_gosling_output.");
    expect(await waitGone(pids)).toEqual([]);
    expect(await goose.text("list_goslings")).toContain("Status summary: 0 running, 0 completed, 0 error, 3 released");
    expect(await goose.text("get_gosling_output", { process_id: a })).toContain("Working on it, for ever.");
    expect(await goose.text("get_gosling_output", { process_id: b })).toMatch(
      /2\. \[.+\] "queued, never run" \(cancelled: not run: released with terminate_all_goslings\)/,
    );
    expect(goose.runs().filter((run) => run.argv)).toHaveLength(3);
    expect(await goose.text("terminate_all_goslings")).toBe("No goslings to terminate.");
  });

  it("close_child_session stops every gosling", async () => {
    goose = await startGooseGaggle();
    await goose.run("[hang] [grandchild] [ignore-term]");
    const pids = await started(goose, 1, 1);
    await goose.gaggle.metaJson("close_child_session", { server_id: "goose" });
    expect(await waitGone(pids)).toEqual([]);
  });

  it("no gosling outlives gaggle: not when its client goes, nor when gaggle is killed", async () => {
    for (const end of ["close", "SIGKILL"] as const) {
      const own = await startGooseGaggle();
      await own.run("[hang] [grandchild] [ignore-term]");
      await own.run("[slow 60000]");
      const pids = await started(own, 2, 1);
      expect(descendants(own.gaggle.pid)).toEqual(expect.arrayContaining(pids));
      if (end === "close") await own.gaggle.close();
      else process.kill(own.gaggle.pid, "SIGKILL");
      // After SIGKILL the watchdog reaps the groups: SIGTERM, the grace period, then SIGKILL.
      expect(await waitGone([own.gaggle.pid, ...pids])).toEqual([]);
      await own.gaggle.close().catch(() => {});
    }
  });
});
