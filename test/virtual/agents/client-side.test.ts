// What gaggle answers an agent as its ACP client: files only inside the session's roots, terminals only as the
// process child's policy allows, run as the session principal's processes.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RunningGaggle } from "../../helpers/gaggle.js";
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
});
