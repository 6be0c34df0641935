// The built-in `workspace` child: gomcptest's Bash, Edit, Replace, View, LS, GlobTool and GrepTool, each client
// session with a persistent shell of its own, every path confined to the roots.
import { LOCAL_PRINCIPAL, type CallContext } from "../../children/child.js";
import type { ChildEvents } from "../../children/switchboard.js";
import type { WorkspaceSettings } from "../../config/virtual/workspace.js";
import { findExecutable } from "../../shared/fs-checks.js";
import { logger } from "../../shared/log.js";
import type { BuiltIn } from "../context.js";
import type { Policy } from "../process/policy.js";
import { loadPolicy, logBrokenPolicy, policyProblems } from "../process/policy-load.js";
import { VirtualChild, type VirtualTool } from "../virtual-child.js";
import { bashTool } from "./bash-tool.js";
import { editTool, replaceTool } from "./edit-tools.js";
import { globTool } from "./glob-tool.js";
import { grepTool } from "./grep-tool.js";
import { lsTool } from "./ls-tool.js";
import type { Place, Workspace } from "./place.js";
import { describeRoots, isInside, sessionKey, WorkspaceRoots } from "./roots.js";
import { Shell } from "./shell.js";
import { viewTool } from "./view-tool.js";

const NAME = "workspace";
const TABLE = ["virtual", "workspace"];

class WorkspaceChild extends VirtualChild implements Workspace {
  protected readonly virtualTools: VirtualTool[];
  private readonly roots: WorkspaceRoots;
  /** One shell per client session (see sessionKey), started on its first Bash call. */
  private readonly shells = new Map<string, Promise<Shell>>();
  /** The principal each shell (by its key in `shells`) belongs to. */
  private readonly shellOwners = new Map<string, string>();

  constructor(
    readonly settings: WorkspaceSettings,
    private readonly graceMs: number,
    policy: Policy,
    rg: string | undefined,
    events: ChildEvents,
  ) {
    super(NAME, "A persistent shell and file tools (Bash, Edit, Replace, View, LS, GlobTool, GrepTool) confined to the workspace's roots", events);
    this.roots = new WorkspaceRoots(settings.roots);
    this.virtualTools = [
      bashTool(this, this, policy),
      editTool(this),
      replaceTool(this),
      viewTool(this),
      lsTool(this),
      globTool(this),
      grepTool(this, rg),
    ];
  }

  async place(ctx: CallContext): Promise<Place> {
    const roots = await this.roots.forCall(ctx);
    const shell = await this.shells.get(sessionKey(ctx.caller))?.catch(() => undefined);
    const cwd = shell?.alive ? shell.cwd : this.roots.home(roots);
    return {
      cwd,
      confine: (path) => this.roots.confine(path, cwd, roots),
      inside: (real) => isInside(real, roots),
      roots: describeRoots(roots),
    };
  }

  async shellFor(ctx: CallContext): Promise<Shell> {
    const key = sessionKey(ctx.caller);
    const known = await this.shells.get(key)?.catch(() => undefined);
    if (known?.alive) return known;
    const starting = this.roots
      .forCall(ctx)
      .then((roots) => Shell.start({ cwd: this.roots.home(roots), graceMs: this.graceMs, maxProcesses: this.settings.maxProcesses }));
    this.shells.set(key, starting);
    this.shellOwners.set(key, ctx.caller?.principal ?? LOCAL_PRINCIPAL);
    starting.catch(() => this.shells.delete(key));
    return starting;
  }

  /** A client session went away: its shell ends, with everything its commands left running. */
  sessionGone(sessionId: string): void {
    this.roots.forget(sessionId);
    const shell = this.shells.get(sessionId);
    if (!shell) return;
    this.shells.delete(sessionId);
    this.shellOwners.delete(sessionId);
    void shell.then((started) => started.stop()).catch(() => {});
  }

  rootsChanged(): void {
    this.roots.forgetClients();
  }

  /** close_child_session("workspace") and shutdown: every shell ends, with everything its commands left running. */
  protected async stopAll(): Promise<void> {
    const shells = [...this.shells.values()];
    this.shells.clear();
    this.shellOwners.clear();
    await Promise.all(shells.map(async (starting) => (await starting.catch(() => undefined))?.stop()));
  }

  /** close_child_session("workspace") by one principal: its own shells end, no one else's. */
  protected override async stopOwnedBy(principal: string): Promise<void> {
    const mine = [...this.shellOwners].filter(([, owner]) => owner === principal).map(([key]) => key);
    const shells = mine.flatMap((key) => this.shells.get(key) ?? []);
    for (const key of mine) {
      this.shells.delete(key);
      this.shellOwners.delete(key);
    }
    await Promise.all(shells.map(async (starting) => (await starting.catch(() => undefined))?.stop()));
  }
}

export const workspaceChild: BuiltIn<WorkspaceSettings> = {
  create(settings, { config, switchboard }) {
    const policy = loadPolicy(settings, config.path, TABLE);
    logBrokenPolicy(policy, NAME, logger({ child: NAME }), "Bash command");
    const found = settings.ripgrep ? findExecutable("rg", settings.roots[0]!, process.env.PATH) : undefined;
    const rg = found && "found" in found ? found.found : undefined;
    const child = new WorkspaceChild(settings, settings.killGraceMs ?? config.gateway.shutdownGraceMs, policy, rg, switchboard);
    switchboard.onCallerGone((sessionId) => child.sessionGone(sessionId));
    switchboard.onRootsChanged(() => child.rootsChanged());
    return child;
  },
  /** A policy that would refuse every command. */
  problems: (settings, config) => policyProblems(loadPolicy(settings, config.path, TABLE), NAME),
  check(settings) {
    if (!settings.ripgrep) return { ok: true, notes: ["GrepTool searches with its own JavaScript search (ripgrep = false)"] };
    const found = findExecutable("rg", settings.roots[0]!, process.env.PATH);
    return {
      ok: true,
      notes: [
        "found" in found
          ? `GrepTool searches with ripgrep (${found.found})`
          : "GrepTool searches with its own JavaScript search: ripgrep (rg) is not on PATH",
      ],
    };
  },
};
