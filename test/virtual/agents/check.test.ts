// What `gaggle validate` and `gaggle doctor` find of the agents child: there only with an [agents.NAME] table, and
// each agent's command found or named as missing.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkBuiltIns } from "../../../src/virtual/index.js";
import { loadConfig } from "../../helpers/config.js";

describe("the agents child's check", () => {
  it("is left out without an [agents.NAME] table", () => {
    expect(checkBuiltIns(loadConfig("")).map((report) => report.name)).not.toContain("agents");
  });

  it("names each agent's command, and fails when one is not found", () => {
    const config = loadConfig(`[agents.here]\ncommand = ${JSON.stringify(process.execPath)}\n\n[agents.gone]\ncommand = "no-such-agent-command"\n`);
    const report = checkBuiltIns(config).find((found) => found.name === "agents");
    expect(report).toEqual({
      name: "agents",
      ok: false,
      notes: [`here: ${process.execPath}`, "gone: its command no-such-agent-command is not found: install the agent, or set [agents.gone] command"],
    });
  });

  it("fails when an agent's cwd or one of its roots is not a directory", () => {
    const missing = join(mkdtempSync(join(tmpdir(), "gaggle-agents-check-")), "missing");
    const command = `command = ${JSON.stringify(process.execPath)}`;
    const config = loadConfig(
      `[agents.nocwd]\n${command}\ncwd = ${JSON.stringify(missing)}\n\n[agents.noroot]\n${command}\nroots = [${JSON.stringify(missing)}]\n`,
    );
    expect(checkBuiltIns(config).find((found) => found.name === "agents")).toEqual({
      name: "agents",
      ok: false,
      notes: [
        `nocwd: ${process.execPath}`,
        `nocwd: its folder ${missing} ([agents.nocwd] cwd) is not a directory: create it, or set [agents.nocwd] cwd`,
        `noroot: ${process.execPath}`,
        `noroot: its root ${missing} ([agents.noroot] roots) is not a directory: create it, or set [agents.noroot] roots`,
      ],
    });
  });

  it("is left out when [virtual.agents] disables it", () => {
    const config = loadConfig(`[virtual.agents]\nenabled = false\n\n[agents.here]\ncommand = ${JSON.stringify(process.execPath)}\n`);
    expect(checkBuiltIns(config).map((report) => report.name)).not.toContain("agents");
  });
});
