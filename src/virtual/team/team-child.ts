// Owns the built-in `team` child: its tools and resources over the shared team state, and stopping its members.
import type { ReadResourceResult, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import type { BackgroundWork, CallContext } from "../../children/child.js";
import type { ChildEvents } from "../../children/switchboard.js";
import { VirtualChild, type VirtualTool } from "../virtual-child.js";
import { readTeamResource, TEAM_RESOURCE_TEMPLATES, teamResources } from "./resources.js";
import { teamTools, type ToolDeps } from "./tools.js";

const NAME = "team";
/** Why members are released, and why a member still starting is not started, when the child is closed. */
const CLOSED = "the team child was closed";
/** Why a message tried while the child is being closed waits. */
const CLOSING = "the team child is being closed";
const DESCRIPTION =
  "Agent teams of goslings and ACP agents: gg_team_manage adds and removes members (optionally in git worktrees), gg_team_message talks, gg_team_status shows the team";

export class TeamChild extends VirtualChild {
  protected readonly virtualTools: VirtualTool[];

  constructor(
    events: ChildEvents,
    private readonly deps: ToolDeps,
  ) {
    super(NAME, DESCRIPTION, events);
    this.virtualTools = teamTools(deps);
    // For gaggle's lifetime: the goose and agents children live exactly as long.
    deps.courier.watch();
  }

  protected override listResources(): Resource[] {
    return teamResources(this.deps.registry, this.deps.listsWork());
  }

  protected override listResourceTemplates(): ResourceTemplate[] {
    return TEAM_RESOURCE_TEMPLATES;
  }

  protected override async read(uri: string, ctx: CallContext): Promise<ReadResourceResult | undefined> {
    return readTeamResource(uri, ctx, this.deps.registry, this.deps.inbox);
  }

  /** A team is its owner's: its clients lead it. */
  override background(): BackgroundWork[] {
    return this.deps.registry.all().map((team) => ({
      kind: "team",
      id: team.team_id,
      owner: team.owner,
      state: `${team.members.filter((member) => !member.removed_at).length} members`,
      title: `led by ${team.lead_agent_id}`,
      startedAt: new Date(team.created_at),
      endedAt: null,
    }));
  }

  /**
   * close_child_session("team") and shutdown: members' goslings and agent sessions are released, and a member still
   * starting is not started (its add fails, or its message waits). Teams, members and waiting deliveries stay on disk;
   * the next team call starts members again as needed.
   */
  protected async stopAll(): Promise<void> {
    const members = () => this.deps.registry.all().flatMap((team) => team.members.map((member) => member.agent_id));
    this.deps.courier.hold(members());
    this.deps.roster.callOffStarting(CLOSED);
    const resume = this.deps.courier.pause(CLOSING);
    try {
      await this.deps.roster.releaseAll(CLOSED);
    } finally {
      // A team call made meanwhile reopened its caller's members: the close, ending after it, holds them again.
      this.deps.courier.hold(members());
      resume();
    }
    // Shutdown waits for the teams' files, so that what members did last is on disk before gaggle exits.
    await this.deps.registry.settled();
  }

  /** close_child_session("team") by one principal: the members of its own teams are released or not started, no one else's. */
  protected override async stopOwnedBy(principal: string): Promise<void> {
    const members = new Set(this.deps.registry.ownedBy(principal).flatMap((team) => team.members.map((member) => member.agent_id)));
    this.deps.courier.hold(members);
    this.deps.roster.callOffStarting(CLOSED, members);
    const resume = this.deps.courier.pause(CLOSING);
    try {
      await this.deps.roster.releaseAll(CLOSED, members);
    } finally {
      // As in stopAll: a team call made meanwhile does not reopen what the close ends.
      this.deps.courier.hold(members);
      resume();
    }
  }
}
