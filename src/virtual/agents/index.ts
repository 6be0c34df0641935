// The built-in `agents` child: the coding agents of `[agents.NAME]` over the Agent Client Protocol, there once one is
// configured (and `[virtual.agents]` does not disable it). Its agents' terminals run in the process child.
import { childEnv } from "../../children/processes/child-env.js";
import type { AgentsSettings } from "../../config/virtual/agents.js";
import { findExecutable } from "../../shared/fs-checks.js";
import { logger } from "../../shared/log.js";
import type { BuiltIn } from "../context.js";
import { ProcessChild } from "../process/index.js";
import { Visibility } from "../visibility.js";
import { missingFolder } from "./admission.js";
import { AgentsChild } from "./agents-child.js";

export const agentsChild: BuiltIn<AgentsSettings> = {
  madeFrom: (config) => config.agents,
  follow: (child, config) => (child instanceof AgentsChild && config.agents.length > 0 ? child.follow(config.agents) : undefined),
  create(_settings, { config, inForce, switchboard, members }, built) {
    if (config.agents.length === 0) return undefined;
    const processes = built.get("process");
    const table = processes instanceof ProcessChild ? processes.table : undefined;
    if (!table) logger({ child: "agents" }).info("agents get no terminals: the process child is disabled");
    const graceMs = config.gateway.shutdownGraceMs;
    const child = new AgentsChild(
      switchboard,
      config.agents,
      (agent) => ({
        name: agent.name,
        command: agent.command,
        args: agent.args,
        cwd: agent.cwd,
        env: childEnv(agent.env, true),
        graceMs,
        files: true,
        terminals: table !== undefined,
      }),
      table,
      Visibility.of(inForce, members),
    );
    switchboard.onCallerGone((sessionId) => child.callerGone(sessionId));
    switchboard.onRootsChanged(() => child.rootsChanged());
    return child;
  },
  check(_settings, _present, config) {
    if (config.agents.length === 0) return undefined;
    let ok = true;
    const notes = config.agents.flatMap((agent) => {
      const lookup = findExecutable(agent.command, agent.cwd, childEnv(agent.env, true).PATH);
      const missing = missingFolder(agent);
      if ("missing" in lookup || missing) ok = false;
      return [
        "found" in lookup
          ? `${agent.name}: ${lookup.found}`
          : `${agent.name}: its command ${agent.command} is not found: install the agent, or set [agents.${agent.name}] command`,
        ...(missing ? [`${agent.name}: ${missing.problem}: ${missing.hint}`] : []),
      ];
    });
    return { ok, notes };
  },
};
