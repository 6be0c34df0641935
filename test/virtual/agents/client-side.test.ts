// What gaggle answers an agent as its ACP client: files only inside the session's roots, terminals only as the
// process child's policy allows, run as the session principal's processes.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RunningGaggle } from "../../helpers/gaggle.js";
import { until } from "../../helpers/poll.js";
import { ended, processJson, run } from "../process/helpers.js";
import { agentDirs, settled, startAgentsGaggle, startSession, transcript } from "./helpers.js";

let gaggle: RunningGaggle | undefined;
afterEach(async () => {
  await gaggle?.close();
  gaggle = undefined;
});

describe("files", () => {
  it("reads and writes inside the session's roots and refuses paths outside them", async () => {
    const dirs = agentDirs();
    writeFileSync(join(dirs.root, "inside.txt"), "inside text");
    writeFileSync(join(dirs.outside, "secret.txt"), "secret text");
    gaggle = await startAgentsGaggle(dirs, 'permission = "allow"');
    const prompt = [
      `read ${join(dirs.root, "inside.txt")}`,
      `read ${join(dirs.outside, "secret.txt")}`,
      `read ${dirs.root}/../outside/secret.txt`,
      `put ${join(dirs.outside, "planted.txt")} planted`,
      "read relative.txt",
      `read ${join(dirs.root, "missing.txt")}`,
    ].join("\n");
    const id = await startSession(gaggle.client, { prompt });
    await settled(gaggle.client, id, 1);
    const text = await transcript(gaggle.client, id);
    expect(text).toContain("read: inside text");
    expect(text).not.toContain("secret text");
    const outside = `"${join(dirs.outside, "secret.txt")}" is outside the allowed roots`;
    expect(text).toContain(`read failed: ${outside}`);
    expect(text).toContain(`[refused] read ${join(dirs.outside, "secret.txt")}: ${outside}`);
    expect(text).toContain(
      `read failed: "${dirs.root}/../outside/secret.txt" is outside the allowed roots (${dirs.root}): it is ${join(dirs.outside, "secret.txt")}`,
    );
    expect(text).toMatch(/write failed: ".*\/outside\/planted\.txt" is outside the allowed roots .*\[agents\.fake\] roots sets them/);
    expect(text).toContain('read failed: "relative.txt" is not an absolute path');
    // ACP's own error for a file that is not there.
    expect(text).toContain(`read failed: Resource not found: ${join(dirs.root, "missing.txt")}`);
  });
});

describe("terminals", () => {
  it("run through the process child: allowed commands run, others are refused by its policy", async () => {
    const dirs = agentDirs();
    gaggle = await startAgentsGaggle(dirs, "", '[virtual.process.policy]\nallow = ["echo *"]\n');
    const id = await startSession(gaggle.client, { prompt: "run echo hello from a terminal\nrun cat /etc/hostname" });
    await settled(gaggle.client, id, 1);
    const text = await transcript(gaggle.client, id);
    expect(text).toContain("exit 0: hello from a terminal");
    expect(text).toContain('run failed: segment "cat /etc/hostname" is refused by the policy rule allow ("echo *")');
    const processes = await gaggle.meta("execute_child_tool", { server_id: "process", tool_name: "gg_process_status", arguments: {} });
    expect(JSON.stringify(processes.content)).toContain("echo hello from a terminal");
  });

  it("tell an agent whose terminal's process keep_finished forgot which process it was and why, not the log's ENOENT", async () => {
    const dirs = agentDirs();
    const gate = join(dirs.dir, "output-gate");
    gaggle = await startAgentsGaggle(dirs, "", "[virtual.process]\nkeep_finished = 1\n", undefined, { FAKE_ACP_OUTPUT_GATE: gate });
    const { client } = gaggle;
    const id = await startSession(client, { prompt: "run echo from a terminal" });
    // The terminal's command has ended, and the agent holds its terminal without having read its output.
    await until(
      () => existsSync(`${gate}.waiting`),
      (waiting) => waiting,
    );
    const pids = async () => (await processJson<{ processes: { pid: number; command: string }[] }>(client, "gg_process_status")).processes;
    const terminal = (await pids()).find((entry) => entry.command === "echo from a terminal");
    expect(terminal).toBeDefined();
    // One more finished process than the table keeps: the terminal's is forgotten, its log deleted.
    const other = await run(client, "true");
    await ended(client, other.pid);
    await until(pids, (kept) => kept.every((entry) => entry.pid !== terminal!.pid));
    writeFileSync(gate, "");
    await settled(client, id, 1);
    expect(await transcript(client, id)).toContain(
      `run failed: process ${terminal!.pid} ended (completed) and gaggle has forgotten it, deleting its output log: ` +
        "[virtual.process] keep_finished keeps 1 finished process, and newer ones pushed this one out (the oldest of whoever keeps the most goes first)",
    );
  });
});
