// Owns the running side of members: each one's runner (a gosling, or an ACP agent session), its member URL, whether
// it is starting, its state, and the events of every runner's turns, passed on to whoever watches the roster.
import type { CallContext } from "../../children/child.js";
import { GaggleError } from "../../shared/errors.js";
import type { AgentsChild } from "../agents/agents-child.js";
import type { AgentSession, SessionFollower } from "../agents/session.js";
import type { Turn } from "../agents/turn.js";
import type { MemberUrl, MemberUrls } from "../context.js";
import type { GooseChild } from "../goose/goose-child.js";
import type { Gosling, PromptEntry } from "../goose/gosling.js";
import type { MemberRecord, TeamRecord } from "./records.js";
import { AgentRunner, GoslingRunner, type MemberEvents, type MemberRunner, type MemberTurn } from "./runners.js";

export type MemberState = "starting" | "working" | "idle" | "exited" | "removed";

/** The MCP server name an ACP member finds gaggle's team tools under. */
export const MEMBER_SERVER_NAME = "gaggle";

interface Running {
  runner?: MemberRunner;
  url?: MemberUrl;
  /** Set while its worktree is made, its URL issued or its runner launched. */
  starting: boolean;
  /** Set while its add starts it: a failed add takes back the worktree it made. */
  adding: boolean;
  /** Why its start was called off while it was starting (the team child closed): its launch refuses with it. */
  calledOff?: string;
}

/** A member's start called off while it was starting: it was not started, and may be started again later. */
export class StartCalledOff extends GaggleError {
  constructor(message: string) {
    super("CANCELLED", message);
  }
}

/** The agents members run on: either may be missing (Goose not installed, no [agents.NAME]). */
export interface MemberAgents {
  goose: GooseChild | undefined;
  agents: AgentsChild | undefined;
}

export class Roster implements SessionFollower {
  private readonly running = new Map<string, Running>();
  /** Runner id -> the runner and its member's agent id. */
  private readonly byRunner = new Map<string, { runner: MemberRunner; agentId: string }>();
  private readonly watchers = new Set<MemberEvents>();

  constructor(
    private readonly kinds: MemberAgents,
    private readonly urls: MemberUrls,
  ) {}

  /** `events` hears of every member's turns, notices and release until the returned function is called. */
  watch(events: MemberEvents): () => void {
    this.watchers.add(events);
    const stopGoose = this.kinds.goose?.watch({
      turnStarted: (gosling, prompt) => this.fromGosling(gosling, (runner) => events.turnStarted(runner, prompt)),
      turnEnded: (gosling, prompt) => this.fromGosling(gosling, (runner) => events.turnEnded(runner, prompt)),
      released: (gosling) => this.fromGosling(gosling, (runner) => events.released(runner)),
      notice: (gosling, text) => this.fromGosling(gosling, (runner) => events.notice(runner, text)),
    });
    return () => {
      this.watchers.delete(events);
      stopGoose?.();
    };
  }

  // ---- an agent session's turns (SessionFollower)

  turnStarted(session: AgentSession, turn: Turn): void {
    this.fromSession(session, (runner, events) => events.turnStarted(runner, turn));
  }

  turnEnded(session: AgentSession, turn: Turn): void {
    this.fromSession(session, (runner, events) => events.turnEnded(runner, turn));
  }

  ended(session: AgentSession): void {
    this.fromSession(session, (runner, events) => events.released(runner));
  }

  // ----

  state(member: MemberRecord): MemberState {
    if (member.removed_at) return "removed";
    const running = this.running.get(member.agent_id);
    if (running?.starting) return "starting";
    const runner = this.live(member.agent_id);
    if (!runner) return "exited";
    return runner.working ? "working" : "idle";
  }

  /** Its runner, unless it has none or that one was released. */
  live(agentId: string): MemberRunner | undefined {
    const runner = this.running.get(agentId)?.runner;
    return runner?.live ? runner : undefined;
  }

  /** Its current or last runner, released or not. */
  runner(agentId: string): MemberRunner | undefined {
    return this.running.get(agentId)?.runner;
  }

  /** The member a runner belongs to, if any. */
  agentOf(runner: MemberRunner): string | undefined {
    return this.byRunner.get(runner.id)?.agentId;
  }

  isStarting(agentId: string): boolean {
    return this.running.get(agentId)?.starting === true;
  }

  /** Whether its add is starting it (rather than a message restarting a member that ran before). */
  isAdding(agentId: string): boolean {
    return this.running.get(agentId)?.adding === true;
  }

  /** Marks it starting while `work` runs (a worktree being made, a runner launched); `adding` when its add starts it. */
  async whileStarting<T>(agentId: string, work: () => Promise<T>, adding = false): Promise<T> {
    const running = this.entry(agentId);
    running.starting = true;
    running.adding = adding;
    try {
      return await work();
    } finally {
      running.starting = false;
      running.adding = false;
      running.calledOff = undefined;
    }
  }

  /**
   * Members starting now (of `agentIds` when given) are not started: each one's launch fails with StartCalledOff
   * giving `reason`. One whose runner was launched already is not starting any more, and is released as any other.
   */
  callOffStarting(reason: string, agentIds?: ReadonlySet<string>): void {
    for (const [agentId, running] of this.running) {
      if (running.starting && (agentIds?.has(agentId) ?? true)) running.calledOff = reason;
    }
  }

  /**
   * A runner for the member, started on `prompt` with gaggle's team tools on the member's own URL: a gosling
   * (`--with-streamable-http-extension`), or a session of its ACP agent (an HTTP MCP server of its session). A
   * member that ran before continues its conversation: its Goose session, or its ACP session (session/load).
   * The team's owner owns what it starts, whoever's call (or delivery) starts it.
   */
  async launch(team: TeamRecord, member: MemberRecord, prompt: string, ctx: CallContext): Promise<{ runner: MemberRunner; turn: MemberTurn }> {
    const running = this.entry(member.agent_id);
    const url = (running.url ??= await this.urls.urlFor({ teamId: team.team_id, agentId: member.agent_id }, team.owner));
    this.checkStillStarting(team, member, running, url);
    const launched = member.agent
      ? await this.launchAgent(team, member, member.agent, running, url, prompt)
      : await this.launchGosling(team, member, running, url, prompt, ctx);
    running.runner = launched.runner;
    this.byRunner.set(launched.runner.id, { runner: launched.runner, agentId: member.agent_id });
    return launched;
  }

  /**
   * Refuses to start a member removed while it was starting (before this launch, or while its URL was issued or its
   * runner checked), or one whose start was called off. Asked again after each wait, just before its runner is made.
   */
  private checkStillStarting(team: TeamRecord, member: MemberRecord, running: Running, url: MemberUrl): void {
    if (member.removed_at || this.running.get(member.agent_id) !== running) {
      url.revoke();
      throw new GaggleError("CANCELLED", `${member.agent_id} was removed from team ${team.team_id} while it was starting`);
    }
    // Its URL stays valid: the member is kept, and a later start uses it.
    if (running.calledOff) throw new StartCalledOff(`${member.agent_id} of team ${team.team_id} was not started: ${running.calledOff}`);
  }

  /** Its runner is released (transcript kept) and its URL stops working. */
  async remove(member: MemberRecord, note: string): Promise<{ wasWorking: boolean }> {
    const running = this.running.get(member.agent_id);
    running?.url?.revoke();
    const runner = this.live(member.agent_id);
    const outcome = runner ? await runner.release(note) : { wasWorking: false };
    this.running.delete(member.agent_id);
    return { wasWorking: outcome.wasWorking };
  }

  /** Every member's runner (of `agentIds` when given) is released; URLs stay valid, so a member restarted later can use its own. */
  async releaseAll(note: string, agentIds?: ReadonlySet<string>): Promise<void> {
    const live = [...this.running.keys()].filter((agentId) => agentIds?.has(agentId) ?? true).flatMap((agentId) => this.live(agentId) ?? []);
    await Promise.all(live.map((runner) => runner.release(note)));
  }

  /** Forgets a member whose add failed. */
  forget(agentId: string): void {
    const running = this.running.get(agentId);
    running?.url?.revoke();
    if (running?.runner) this.byRunner.delete(running.runner.id);
    this.running.delete(agentId);
  }

  private async launchGosling(
    team: TeamRecord,
    member: MemberRecord,
    running: Running,
    url: MemberUrl,
    prompt: string,
    ctx: CallContext,
  ): Promise<{ runner: MemberRunner; turn: PromptEntry }> {
    const goose = this.requireGoose();
    const tokens = ["--with-streamable-http-extension", url.url, ...member.options];
    const start = await goose.prepareGosling(tokens, team.owner);
    this.checkStillStarting(team, member, running, url);
    const launched = goose.openGosling(start, prompt, ctx, "team_member", member.cwd, member.session ?? undefined);
    member.session = launched.gosling.conversation;
    member.gosling_id = launched.gosling.id;
    return { runner: new GoslingRunner(goose, launched.gosling), turn: launched.entry };
  }

  private async launchAgent(
    team: TeamRecord,
    member: MemberRecord,
    agent: string,
    running: Running,
    url: MemberUrl,
    prompt: string,
  ): Promise<{ runner: MemberRunner; turn: Turn }> {
    const agents = this.requireAgents();
    const start = await agents.prepareMember({
      agent,
      owner: team.owner,
      cwd: member.cwd,
      loadSession: member.session ?? undefined,
      mcpServers: [{ type: "http", name: MEMBER_SERVER_NAME, url: url.url, headers: [] }],
      follower: this,
    });
    this.checkStillStarting(team, member, running, url);
    const { session, turn } = agents.startMember(start, prompt);
    member.agent_session_id = session.id;
    return { runner: new AgentRunner(agents, session), turn };
  }

  /** The ACP agents a member may be. */
  agentNames(): string[] {
    return this.kinds.agents?.agentNames ?? [];
  }

  /** Where a gosling member runs without a worktree: the goose child's cwd. */
  goslingHome(): string {
    return this.requireGoose().defaultCwd;
  }

  private requireGoose(): GooseChild {
    if (this.kinds.goose) return this.kinds.goose;
    const agents = this.kinds.agents?.agentNames.map((name) => JSON.stringify(name)).join(", ");
    throw new GaggleError(
      "INVALID_ARGS",
      "a member without `agent` is a gosling, and there is no goose child (Goose is not installed, or it is disabled)",
      {
        hint: agents ? `name an ACP agent with agent: one of ${agents}` : "install Goose, or configure an [agents.NAME]",
      },
    );
  }

  /** The agents child, for a member that names an ACP agent. */
  requireAgents(): AgentsChild {
    if (this.kinds.agents) return this.kinds.agents;
    throw new GaggleError("INVALID_ARGS", "`agent` names an ACP agent, and none is configured", {
      hint: "add an [agents.NAME] table to gaggle's config",
    });
  }

  private fromGosling(gosling: Gosling, tell: (runner: MemberRunner) => void): void {
    const found = this.byRunner.get(gosling.id);
    if (found) tell(found.runner);
  }

  private fromSession(session: AgentSession, tell: (runner: MemberRunner, events: MemberEvents) => void): void {
    const found = this.byRunner.get(session.id);
    if (!found) return;
    for (const events of this.watchers) tell(found.runner, events);
  }

  private entry(agentId: string): Running {
    let running = this.running.get(agentId);
    if (!running) this.running.set(agentId, (running = { starting: false, adding: false }));
    return running;
  }
}
