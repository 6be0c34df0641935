// The built-in `process` child: background commands (gg_process_*) that never block the conversation.
import { dirname, join } from "node:path";
import type { ReadResourceResult, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import type { BackgroundWork, CallContext } from "../../children/child.js";
import type { ChildEvents } from "../../children/switchboard.js";
import type { ProcessSettings } from "../../config/virtual/process.js";
import { logger } from "../../shared/log.js";
import type { BuiltIn } from "../context.js";
import { VirtualChild, type VirtualTool } from "../virtual-child.js";
import type { Policy } from "./policy.js";
import { loadPolicy, logBrokenPolicy, policyProblems } from "./policy-load.js";
import { ProcessTable } from "./process-table.js";
import { PROCESS_RESOURCES, PROCESS_RESOURCE_TEMPLATES, readProcessResource } from "./resources.js";
import { callerOf, processTools } from "./tools.js";
import { Visibility } from "../visibility.js";

const NAME = "process";

export class ProcessChild extends VirtualChild {
  protected readonly virtualTools: VirtualTool[];

  constructor(
    /** Every process it started; the agents child runs its agents' terminals here, under the same policy and limits. */
    readonly table: ProcessTable,
    events: ChildEvents,
    defaultTimeoutMs: number,
    baseDir: string,
  ) {
    super(NAME, "Background commands that never block the conversation: gg_process_run, gg_process_status, gg_process_kill", events);
    this.virtualTools = processTools(table, defaultTimeoutMs, baseDir);
  }

  protected override listResources(): Resource[] {
    return PROCESS_RESOURCES;
  }

  protected override listResourceTemplates(): ResourceTemplate[] {
    return PROCESS_RESOURCE_TEMPLATES;
  }

  protected override async read(uri: string, ctx: CallContext): Promise<ReadResourceResult | undefined> {
    return readProcessResource(this.table, uri, callerOf(ctx).principal);
  }

  override background(): BackgroundWork[] {
    return this.table.list().map((entry) => ({
      kind: "process",
      id: String(entry.pid),
      owner: entry.spec.owner,
      state: entry.status,
      title: entry.command,
      startedAt: entry.startedAt,
      endedAt: entry.endedAt ?? null,
    }));
  }

  /** Called on close_child_session("process") and at shutdown: no process gaggle started survives it. */
  protected async stopAll(): Promise<void> {
    await this.table.stopAll();
  }

  /** close_child_session("process") by one principal: its own processes end, no one else's. */
  protected override async stopOwnedBy(principal: string): Promise<void> {
    await this.table.stopAll(principal);
  }
}

export const processChild: BuiltIn<ProcessSettings> = {
  create(settings, { config, inForce, switchboard, stateDir, members }) {
    const log = logger({ child: NAME });
    const policy = loadPolicy(settings, config.path);
    announcePolicy(policy, log);
    const baseDir = dirname(config.path);
    const table = new ProcessTable({
      childName: NAME,
      events: switchboard,
      policy,
      baseDir,
      logDir: settings.logDir ?? join(stateDir, "process"),
      maxConcurrent: settings.maxConcurrent,
      maxConcurrentPerPrincipal: settings.maxConcurrentPerPrincipal,
      maxProcesses: settings.maxProcesses,
      maxOutputBytes: settings.maxOutputBytes,
      defaultTimeoutMs: settings.defaultTimeoutMs,
      killGraceMs: settings.killGraceMs ?? config.gateway.shutdownGraceMs,
      keepFinished: settings.keepFinished,
      visibility: Visibility.of(inForce, members),
      log,
    });
    return new ProcessChild(table, switchboard, settings.defaultTimeoutMs, baseDir);
  },
  /** A policy that would refuse every command. */
  problems: (settings, config) => policyProblems(loadPolicy(settings, config.path), NAME),
};

/** The policy said at start-up: a broken one, not only when the first command is refused. */
function announcePolicy(policy: Policy, log: ReturnType<typeof logger>): void {
  logBrokenPolicy(policy, NAME, log);
  if (policy.kind === "rules") {
    const allow = policy.allow === "*" ? "every command" : `${policy.allow.length} command patterns`;
    const cwd = policy.cwdAllow ? `under ${policy.cwdAllow.join(", ")}` : "in any directory";
    log.info({ source: policy.source }, `process policy: ${allow}, ${cwd}`);
  }
}
