// The process child through a real gaggle over stdio: running commands, reading their output, timeouts, registration.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
  type LoggingMessageNotification,
} from "@modelcontextprotocol/sdk/types.js";
import { readJsonResource, startGaggle, textOf, type RunningGaggle } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { isAlive, waitGone } from "../../helpers/processes.js";
import { callProcess, ended, processConfig, processFailure, processJson, run, status, type Status } from "./helpers.js";

describe("process child over stdio", () => {
  let gaggle: RunningGaggle;
  let stateDir: string;
  const notices: LoggingMessageNotification["params"][] = [];
  const updated: string[] = [];

  beforeAll(async () => {
    const config = processConfig("[virtual.process]\nkill_grace_ms = 300\n");
    stateDir = config.stateDir;
    gaggle = await startGaggle(config.text);
    gaggle.client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => void notices.push(note.params));
    gaggle.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => void updated.push(note.params.uri));
  });

  afterAll(() => gaggle.close());

  it("is listed, described and reported like any child", async () => {
    const children = await gaggle.metaJson<{ children: string[] }>("list_registered_children");
    expect(children.children).toContain("process");
    const schema = await gaggle.metaJson<{ tools: { name: string }[]; resources: { uri: string }[]; resource_templates?: unknown }>("get_schema", {
      server_id: "process",
    });
    expect(schema.tools.map((tool) => tool.name)).toEqual(["gg_process_run", "gg_process_status", "gg_process_kill"]);
    expect(JSON.stringify(schema)).toContain("process://list");
    expect(JSON.stringify(schema)).toContain("process://{pid}/log");
    const childStatus = await gaggle.metaJson<{ status: string; transport: string }>("get_child_status", { server_id: "process" });
    expect(childStatus).toMatchObject({ status: "running", transport: "virtual" });
  });

  it("runs a quick command, returns at once, and tells the client when it ends", async () => {
    const started = await run(gaggle.client, "echo hello; echo oops >&2; exit 0");
    expect(started).toMatchObject({ status: "running", command: "echo hello; echo oops >&2; exit 0", timeout_ms: 600_000 });
    expect(started.log_uri).toBe(`process://${started.pid}/log`);
    expect(started.log_file.startsWith(`${stateDir}/process/`)).toBe(true);
    const done = await ended(gaggle.client, started.pid);
    expect(done).toMatchObject({ status: "completed", exit_code: 0, owned: true, truncated: false, output_lines: 2 });
    expect(done.output.split("\n").sort()).toEqual(["hello", "oops"]);
    expect(readFileSync(started.log_file, "utf8")).toContain("hello\n");

    const notice = await until(() => notices.find((n) => (n.data as { pid?: number }).pid === started.pid), Boolean);
    expect(notice).toMatchObject({ level: "info", logger: "process" });
    expect(notice!.data).toMatchObject({ pid: started.pid, status: "completed", exit_code: 0, command: started.command });
    expect((notice!.data as { last_lines: string[] }).last_lines.sort()).toEqual(["hello", "oops"]);
    expect((notice!.data as { duration_ms: number }).duration_ms).toBeGreaterThanOrEqual(0);
    expect(
      await until(
        () => updated,
        (uris) => uris.includes(started.log_uri),
      ),
    ).toContain(started.log_uri);
  });

  it("reports a non-zero exit as failed, and says what 127 means", async () => {
    const failed = await ended(gaggle.client, (await run(gaggle.client, "exit 3")).pid);
    expect(failed).toMatchObject({ status: "failed", exit_code: 3 });
    const missing = await ended(gaggle.client, (await run(gaggle.client, "no-such-command-gaggle")).pid);
    expect(missing).toMatchObject({ status: "failed", exit_code: 127 });
    expect(missing.note).toContain("did not find the command");
  });

  it("keeps a long command running in the background and lists it first", async () => {
    const long = await run(gaggle.client, "echo started; sleep 30", { timeout_ms: 0 });
    const listing = await processJson<{ processes: { pid: number; status: string }[]; running: number }>(gaggle.client, "gg_process_status");
    expect(listing.processes[0]).toMatchObject({ pid: long.pid, status: "running" });
    expect(listing.running).toBeGreaterThanOrEqual(1);
    const live = await until(
      () => status(gaggle.client, long.pid),
      (s) => s.output === "started",
    );
    expect(live).toMatchObject({ status: "running", exit_code: null, ended_at: null, timeout_ms: 0 });
    expect(isAlive(long.pid)).toBe(true);
    const killed = await processJson<Status>(gaggle.client, "gg_process_kill", { pid: long.pid });
    expect(killed.status).toBe("killed");
    expect(await waitGone([long.pid])).toEqual([]);
    const again = await processJson<Status>(gaggle.client, "gg_process_kill", { pid: long.pid });
    expect(again).toMatchObject({ status: "killed", note: expect.stringContaining("already ended") });
  });

  it("shows head and tail lines with a line counting the ones between", async () => {
    const counted = await ended(gaggle.client, (await run(gaggle.client, "seq 1 1000")).pid);
    expect(counted.output_lines).toBe(1000);
    expect(counted.output.split("\n")).toHaveLength(81);
    expect(counted.output.split("\n").at(-1)).toBe("1000");
    const view = await status(gaggle.client, counted.pid, { head_lines: 3, tail_lines: 2 });
    expect(view.output).toBe("1\n2\n3\n[... 995 lines omitted ...]\n999\n1000");
    expect(view).toMatchObject({ head_lines: 3, tail_lines: 2, omitted_lines: 995 });
  });

  it("times a command out, killing its whole group", async () => {
    const slow = await run(gaggle.client, "sleep 30 & sleep 30; wait", { timeout_ms: 300 });
    const done = await ended(gaggle.client, slow.pid);
    expect(done.status).toBe("timed_out");
    expect(done.runtime_ms).toBeGreaterThanOrEqual(300);
    expect(await waitGone([slow.pid])).toEqual([]);
  });

  it("rejects unknown fields and bad values before anything runs", async () => {
    const unknown = await processFailure(gaggle.client, "gg_process_run", { command: "true", shell: "bash" });
    expect(unknown.code).toBe("INVALID_ARGS");
    expect(unknown.error).toContain('unexpected property "shell"');
    expect((await processFailure(gaggle.client, "gg_process_status", { pid: 1, lines: 3 })).code).toBe("INVALID_ARGS");
    expect((await processFailure(gaggle.client, "gg_process_kill", {})).code).toBe("INVALID_ARGS");
    expect((await processFailure(gaggle.client, "gg_process_run", { command: "true", timeout_ms: -1 })).code).toBe("INVALID_ARGS");
  });

  it("runs a command in the config file's folder unless it names a cwd, and reads a relative cwd from there", async () => {
    const { config_path } = await readJsonResource<{ config_path: string }>(gaggle.client, "mcp://server_summary");
    const configDir = realpathSync(dirname(config_path));
    expect(configDir).not.toBe(realpathSync(process.cwd())); // gaggle itself was started in the repository
    mkdirSync(join(configDir, "sub"), { recursive: true });
    const plain = await run(gaggle.client, "pwd");
    expect(plain.cwd).toBe(configDir);
    expect((await ended(gaggle.client, plain.pid)).output).toBe(configDir);
    const relative = await run(gaggle.client, "pwd", { cwd: "sub" });
    expect(relative.cwd).toBe(join(configDir, "sub"));
    expect((await ended(gaggle.client, relative.pid)).output).toBe(join(configDir, "sub"));
    const missing = await processFailure(gaggle.client, "gg_process_run", { command: "true", cwd: "nope" });
    expect(missing).toMatchObject({ code: "INVALID_ARGS", error: expect.stringContaining(join(configDir, "nope")) });
    expect(missing.hint).toContain(`relative paths start from ${configDir}, the config file's folder`);
  });

  it("says what to do next when a pid or a cwd is wrong", async () => {
    const missing = await processFailure(gaggle.client, "gg_process_status", { pid: 999_999_999 });
    expect(missing).toMatchObject({ code: "NOT_FOUND", hint: expect.stringContaining("gg_process_status") });
    const badCwd = await processFailure(gaggle.client, "gg_process_run", { command: "true", cwd: "/no/such/dir" });
    expect(badCwd).toMatchObject({ code: "INVALID_ARGS", error: expect.stringContaining("/no/such/dir") });
  });

  it("lists process://list and process://{pid}/log in resources/list and resources/templates/list, in meta mode too", async () => {
    const { resources } = await gaggle.client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(["mcp://server_summary", "mcp://children_servers", "process://list"]);
    const { resourceTemplates } = await gaggle.client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(["process://{pid}/log"]);
  });

  it("serves process://list and process://{pid}/log", async () => {
    const done = await ended(gaggle.client, (await run(gaggle.client, "printf 'a\\nb\\n'")).pid);
    const list = await readJsonResource<{ processes: { pid: number; owned: boolean }[] }>(gaggle.client, "process://list");
    expect(list.processes).toContainEqual(expect.objectContaining({ pid: done.pid, owned: true }));
    const { contents } = await gaggle.client.readResource({ uri: done.log_uri });
    expect(contents[0]).toMatchObject({ uri: done.log_uri, mimeType: "text/plain", text: "a\nb" });
    await expect(gaggle.client.readResource({ uri: "process://999999999/log" })).rejects.toThrow(/not found/i);
  });

  it("close_child_session stops every process it runs", async () => {
    const long = await run(gaggle.client, "sleep 30");
    await gaggle.metaJson("close_child_session", { server_id: "process" });
    expect(await waitGone([long.pid], 5000)).toEqual([]);
    expect((await status(gaggle.client, long.pid)).status).toBe("killed");
    const after = await ended(gaggle.client, (await run(gaggle.client, "true")).pid);
    expect(after.status).toBe("completed");
  });

  it("keeps its logs in the state dir", () => {
    expect(existsSync(`${stateDir}/process`)).toBe(true);
  });
});

describe("[virtual.process] expose = true", () => {
  it("lists its tools under their own names beside the meta-tools", async () => {
    const config = processConfig("[virtual.process]\nexpose = true\n");
    const gaggle = await startGaggle(config.text);
    try {
      const { tools } = await gaggle.client.listTools();
      const names = tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(["execute_child_tool", "gg_process_run", "gg_process_status", "gg_process_kill"]));
      const direct = await gaggle.client.callTool({ name: "gg_process_run", arguments: { command: "echo direct" } });
      const pid = (JSON.parse(textOf(direct as CallToolResult)) as { pid: number }).pid;
      const done = await ended(gaggle.client, pid);
      expect(done.output).toBe("direct");
    } finally {
      await gaggle.close();
    }
  });

  it("is absent with enabled = false", async () => {
    const gaggle = await startGaggle(processConfig("[virtual.process]\nenabled = false\n").text);
    try {
      const children = await gaggle.metaJson<{ children: string[] }>("list_registered_children");
      expect(children.children).not.toContain("process");
    } finally {
      await gaggle.close();
    }
  });
});

describe("a gaggle out of file descriptors", () => {
  it("refuses a run with SERVER_FAILED saying so, and answers again once descriptors are free", async () => {
    const gaggle = await startGaggle(processConfig().text);
    try {
      // A few descriptors above what it holds now: each running command takes some (its pipes, its log).
      const limit = readdirSync(`/proc/${gaggle.pid}/fd`).length + 12;
      expect(spawnSync("prlimit", ["--pid", String(gaggle.pid), `--nofile=${limit}:${limit}`]).status).toBe(0);
      const started: number[] = [];
      let refusal: Awaited<ReturnType<typeof processFailure>> | undefined;
      for (let i = 0; i < 20 && refusal === undefined; i++) {
        const result = await callProcess(gaggle.client, "gg_process_run", { command: "sleep 60" });
        if (result.isError) refusal = await processFailure(gaggle.client, "gg_process_run", { command: "sleep 60" });
        else started.push((JSON.parse(textOf(result)) as { pid: number }).pid);
      }
      expect(refusal).toMatchObject({
        code: "SERVER_FAILED",
        error: expect.stringContaining("gaggle has no file descriptors left (EMFILE): too many connections, processes or files are open"),
      });
      for (const pid of started) await processJson(gaggle.client, "gg_process_kill", { pid });
      const after = await run(gaggle.client, "echo again");
      expect((await ended(gaggle.client, after.pid)).output).toBe("again");
    } finally {
      await gaggle.close();
    }
  });
});
