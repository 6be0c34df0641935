// A finished process that keep_finished pushes out between a reader's lookup and its read of the log: the process
// child built as gaggle builds it, its table driven in that order. The read fails naming the process, why it was
// forgotten and what to do, never with the file system's ENOENT.
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { LOCAL_PRINCIPAL } from "../../../src/children/child.js";
import { Switchboard } from "../../../src/children/switchboard.js";
import { BuiltInChildren, type MemberUrls } from "../../../src/virtual/index.js";
import { ProcessChild } from "../../../src/virtual/process/index.js";
import type { ManagedProcess } from "../../../src/virtual/process/managed-process.js";
import type { ProcessTable } from "../../../src/virtual/process/process-table.js";
import { logResource } from "../../../src/virtual/process/resources.js";
import { logUri, outputView } from "../../../src/virtual/process/views.js";
import { loadConfig } from "../../helpers/config.js";
import { until } from "../../helpers/poll.js";
import { processConfig } from "./helpers.js";

const NO_MEMBER_LISTENER: MemberUrls = {
  urlFor: async () => ({ url: "http://127.0.0.1:9/members/unused/mcp", revoke: () => {} }),
  leadOf: () => undefined,
  sameTeam: () => false,
};

const BY = { principal: LOCAL_PRINCIPAL, session: "forgotten-test" };

let child: ProcessChild | undefined;
afterEach(async () => {
  await child?.close();
  child = undefined;
});

/** The process child of a gaggle whose [virtual.process] has `settings`. */
function processTable(settings: string): ProcessTable {
  const config = processConfig(`[virtual.process]\n${settings}\n`);
  const made = new BuiltInChildren(loadConfig(config.text), new Switchboard(), NO_MEMBER_LISTENER).children();
  const found = made.find((each) => each.name === "process");
  if (!(found instanceof ProcessChild)) throw new Error(`no process child among ${made.map((each) => each.name).join(", ")}`);
  child = found;
  return found.table;
}

/** Runs `command` to its end, with its log complete. */
async function finished(table: ProcessTable, command: string): Promise<ManagedProcess> {
  const started = await table.run({ command }, BY);
  await started.ended;
  return started;
}

describe("a finished process forgotten while a reader holds it", () => {
  it("fails the status view and the log resource naming the process, keep_finished and what to do", async () => {
    const table = processTable("keep_finished = 1");
    const first = await finished(table, "echo first output");
    // The lookup a reader makes (gg_process_status, process://{pid}/log) before it reads the log.
    const held = table.get(first.pid, LOCAL_PRINCIPAL);
    expect((await outputView(held, LOCAL_PRINCIPAL, 0, 80)).output).toBe("first output");

    // A second finished process is one more than the table keeps: the first is forgotten, its log deleted.
    await finished(table, "echo second output");
    await until(
      () => existsSync(held.output.path),
      (exists) => !exists,
    );
    expect(table.find(first.pid)).toBeUndefined();

    const forgotten = {
      name: "GaggleError",
      code: "NOT_FOUND",
      message:
        `process ${first.pid} ended (completed) and gaggle has forgotten it, deleting its output log: ` +
        "[virtual.process] keep_finished keeps 1 finished process, and newer ones pushed this one out (the oldest of whoever keeps the most goes first)",
      hint: "read a process's output soon after it ends, or raise [virtual.process] keep_finished; gg_process_status without a pid lists the processes kept",
    };
    await expect(outputView(held, LOCAL_PRINCIPAL, 0, 80)).rejects.toMatchObject(forgotten);
    await expect(logResource(logUri(first.pid), held)).rejects.toMatchObject(forgotten);
  });

  it("says a log deleted by something other than gaggle is gone, naming the process and its file", async () => {
    const table = processTable("keep_finished = 5");
    const only = await finished(table, "echo kept output");
    const held = table.get(only.pid, LOCAL_PRINCIPAL);
    await rm(held.output.path);
    const gone = {
      code: "SERVER_FAILED",
      message: `the output log of process ${only.pid} (${held.output.path}) is gone: something other than gaggle deleted it`,
      hint: "its output is lost; nothing but gaggle should delete files in [virtual.process] log_dir while gaggle runs",
    };
    await expect(outputView(held, LOCAL_PRINCIPAL, 0, 80)).rejects.toMatchObject(gone);
    await expect(logResource(logUri(only.pid), held)).rejects.toMatchObject(gone);
  });
});
