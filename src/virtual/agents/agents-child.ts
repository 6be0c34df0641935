// Owns the built-in `agents` child: the ACP agents of `[agents.NAME]`, one process per agent and principal serving that
// principal's sessions of the agent, the sessions and who owns them, and the notices when turns end.
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import type { ReadResourceResult, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { LOCAL_PRINCIPAL, type BackgroundWork, type CallContext } from "../../children/child.js";
import type { Switchboard } from "../../children/switchboard.js";
import type { AgentConfig } from "../../config/agents.js";
import { GaggleError } from "../../shared/errors.js";
import { recordsToForget } from "../../shared/fair-share.js";
import { canonical, isDirectory } from "../../shared/fs-probes.js";
import { logger } from "../../shared/log.js";
import { formatDuration } from "../goose/format.js";
import type { ProcessTable } from "../process/process-table.js";
import type { Visibility } from "../visibility.js";
import { isInside, WorkspaceRoots, type CallRoots } from "../workspace/roots.js";
import { VirtualChild, type VirtualTool } from "../virtual-child.js";
import type { AgentLaunch } from "./agent-process.js";
import { checkRoom, checkRunnable } from "./admission.js";
import { AgentProcesses, type ProcessLoss } from "./agent-processes.js";
import type { Ask } from "./permissions.js";
import { AGENTS_RESOURCE_TEMPLATES, readAgentsResource, transcriptUri } from "./resources.js";
import { AgentSession, type SessionFollower, type SessionHost, type SessionOptions } from "./session.js";
import type { PromptSource, Turn } from "./turn.js";
import { agentsTools } from "./tools.js";

const NAME = "agents";
const DESCRIPTION =
  "Coding agents over the Agent Client Protocol (Claude, Codex, Gemini, Goose, ...): start sessions, prompt them, follow their transcripts";

/** What a team member's session is: its agent, who owns it, where it runs, what it resumes and whom it tells. */
export interface MemberSpec {
  agent: string;
  owner: string;
  cwd: string;
  loadSession: string | undefined;
  mcpServers: acp.McpServer[];
  follower: SessionFollower;
}

/** A member's session checked and placed by `prepareMember`, for `startMember` to open. */
export interface MemberStart {
  member: MemberSpec;
  entry: AgentEntry;
  cwd: string;
  roots: CallRoots;
}

/** One configured agent: how to start it, its roots, and its processes while they run, one per principal. */
interface AgentEntry {
  config: AgentConfig;
  launch: AgentLaunch;
  roots: WorkspaceRoots;
  processes: AgentProcesses;
}

export class AgentsChild extends VirtualChild implements ProcessLoss {
  protected virtualTools: VirtualTool[];
  private readonly agents = new Map<string, AgentEntry>();
  private readonly sessions = new Map<string, AgentSession>();
  private readonly log = logger({ child: NAME });

  constructor(
    private readonly switchboard: Switchboard,
    configs: AgentConfig[],
    private readonly launchOf: (config: AgentConfig) => AgentLaunch,
    private readonly terminals: ProcessTable | undefined,
    private readonly visibility: Visibility,
  ) {
    super(NAME, DESCRIPTION, switchboard);
    for (const config of configs) this.agents.set(config.name, this.entryOf(config));
    this.virtualTools = agentsTools(this);
  }

  /**
   * Follows an edit of the `[agents.NAME]` tables in place: an agent whose table is as it was keeps its process and
   * its sessions; one whose table changed or is gone has its live sessions released (their transcripts stay) and its
   * process stopped; a new one is added. Resolves once the released sessions and stopped processes are done.
   */
  follow(configs: AgentConfig[]): Promise<void> {
    const next = new Map(configs.map((config) => [config.name, config]));
    const retired: Array<{ entry: AgentEntry; why: string }> = [];
    for (const [name, entry] of this.agents) {
      const config = next.get(name);
      if (config && JSON.stringify(config) === JSON.stringify(entry.config)) continue;
      this.agents.delete(name);
      retired.push({ entry, why: `[agents.${name}] was ${config ? "changed" : "removed"} in the config` });
    }
    for (const config of configs) if (!this.agents.has(config.name)) this.agents.set(config.name, this.entryOf(config));
    // The tools name the agents in their schemas.
    this.virtualTools = agentsTools(this);
    this.toolsReplaced();
    return Promise.all(retired.map(({ entry, why }) => this.retire(entry, why))).then(() => undefined);
  }

  private entryOf(config: AgentConfig): AgentEntry {
    const launch = this.launchOf(config);
    return {
      config,
      launch,
      roots: new WorkspaceRoots(config.roots, `[agents.${config.name}] roots`),
      processes: new AgentProcesses(config, launch, this, this.log),
    };
  }

  /** An agent the config no longer has as it was: its sessions released, then its processes stopped. */
  private async retire(entry: AgentEntry, why: string): Promise<void> {
    const sessions = [...this.sessions.values()].filter((session) => session.config === entry.config && session.live);
    await Promise.all(
      sessions.map(async (session) => {
        await session.release(why);
        this.transcriptChanged(session);
      }),
    );
    await entry.processes.stopAll();
  }

  /** A client session went away: its cached roots are forgotten. */
  callerGone(sessionId: string): void {
    for (const entry of this.agents.values()) entry.roots.forget(sessionId);
  }

  /** A client's roots changed: every client is asked again on its next start_agent. */
  rootsChanged(): void {
    for (const entry of this.agents.values()) entry.roots.forgetClients();
  }

  get agentNames(): string[] {
    return [...this.agents.keys()];
  }

  agentConfig(name: string | undefined): AgentConfig {
    return this.entry(name).config;
  }

  /** The sessions the caller may list and read, oldest first: its principal's, unless gateway.visibility = "all". */
  visibleTo(ctx: CallContext): AgentSession[] {
    const viewer = principalOf(ctx);
    return [...this.sessions.values()].filter((session) => this.visibility.sees(session.owner, viewer));
  }

  /**
   * A session the caller may see; one it may not is refused as if it did not exist. With `change` (prompt, cancel,
   * release), only its own principal's.
   */
  find(sessionId: string, ctx: CallContext, change = false): AgentSession {
    const viewer = principalOf(ctx);
    const session = this.sessions.get(sessionId);
    if (!session || !this.visibility.sees(session.owner, viewer)) {
      throw new GaggleError("NOT_FOUND", `no agent session "${sessionId}" of yours`, { hint: "list_agent_sessions lists your sessions" });
    }
    if (change && session.owner !== viewer) {
      throw new GaggleError(
        "PERMISSION_DENIED",
        `agent session ${session.id} belongs to another client (${JSON.stringify(session.owner)}), not to you (${JSON.stringify(viewer)})`,
        { hint: "get_agent_output still shows it; only a client with the token that started it can prompt, cancel or release it" },
      );
    }
    return session;
  }

  /**
   * Starts a session of `agentName` in `cwd` (inside the agent's roots, narrowed by the client's); returns at once,
   * the ACP session being made in the background. With `prompt`, its first turn is queued.
   */
  async start(
    request: { agent?: string | undefined; cwd?: string | undefined; loadSession?: string | undefined; prompt?: string | undefined },
    ctx: CallContext,
    ask?: Ask,
  ): Promise<{ session: AgentSession; turn: Turn | undefined }> {
    const entry = await this.startable(request.agent, principalOf(ctx));
    const roots = await entry.roots.forCall(ctx);
    const home = entry.roots.home(roots);
    const cwd = await entry.roots.confine(request.cwd === undefined ? home : resolve(home, request.cwd), home, roots);
    if (!(await isDirectory(cwd))) {
      throw new GaggleError("INVALID_ARGS", `cwd "${request.cwd ?? cwd}" is not a directory (resolved to ${cwd})`, {
        hint: `give a folder that exists inside [agents.${entry.config.name}] roots (${entry.roots.configured.join(", ")}); a relative one is taken from ${home}`,
      });
    }
    // Asking the client for its roots, and the disk about folders, let other starts in meanwhile: the room is counted
    // again where the session opens.
    this.checkRoom(entry.config, principalOf(ctx));
    const session = this.open(entry, principalOf(ctx), ctx.caller?.sessionId, cwd, roots, { loadFrom: request.loadSession });
    const turn = request.prompt === undefined ? undefined : session.send(request.prompt, this.sourceOf(ctx, ask));
    return { session, turn };
  }

  /** Where a session of `agentName` starts unless told otherwise: the first of its roots. */
  homeOf(agentName: string): string {
    return this.entry(agentName).roots.configured[0]!;
  }

  /**
   * A team member's session, checked (room, command, folders) but not opened: `startMember` opens it. Its roots are
   * the agent's when `cwd` lies inside them, else `cwd` alone (a worktree gaggle made for the member).
   */
  async prepareMember(member: MemberSpec): Promise<MemberStart> {
    const entry = await this.startable(member.agent, member.owner);
    const cwd = await canonical(member.cwd);
    if (!(await isDirectory(cwd))) throw new GaggleError("INVALID_ARGS", `the member's folder ${member.cwd} is not a directory`);
    const inside = isInside(cwd, { configured: entry.roots.configured, client: undefined });
    return { member, entry, cwd, roots: { configured: inside ? entry.roots.configured : [cwd], client: undefined } };
  }

  /**
   * Opens a prepared member's session, owned by `owner` (the team's owner) and started on `prompt`; no client's roots
   * narrow it, and nobody is asked about its permission requests: the agent's `permission` policy answers them.
   * `member.loadSession` resumes the member's conversation where the agent can load it, else a new one starts.
   */
  startMember(start: MemberStart, prompt: string): { session: AgentSession; turn: Turn } {
    const { member, entry, cwd, roots } = start;
    // Preparing it awaited the disk, letting other starts in: the room is counted again where the session opens.
    this.checkRoom(entry.config, member.owner);
    const session = this.open(entry, member.owner, undefined, cwd, roots, {
      loadFrom: member.loadSession,
      newIfUnloadable: true,
      mcpServers: member.mcpServers,
      follower: member.follower,
    });
    return { session, turn: session.send(prompt, { clientSession: undefined, ask: undefined }) };
  }

  /**
   * The agent's entry, when `owner` may start one more session of it (its share, and the agent's live sessions over
   * every principal) and its command is there.
   */
  private async startable(agentName: string | undefined, owner: string): Promise<AgentEntry> {
    const entry = this.entry(agentName);
    this.checkRoom(entry.config, owner);
    await checkRunnable(entry.config, entry.launch);
    return entry;
  }

  /** Refuses one more live session of the agent for `owner` past its share or past the agent's max_active. */
  private checkRoom(config: AgentConfig, owner: string): void {
    checkRoom(
      config,
      [...this.sessions.values()].flatMap((session) => (session.config.name === config.name && session.live ? [session.owner] : [])),
      owner,
    );
  }

  private open(
    entry: AgentEntry,
    owner: string,
    startedBy: string | undefined,
    cwd: string,
    roots: CallRoots,
    options: SessionOptions,
  ): AgentSession {
    const session = new AgentSession(randomUUID(), entry.config, owner, startedBy, cwd, roots, this.hostFor(entry, owner), options);
    this.sessions.set(session.id, session);
    this.prune();
    // No list change to announce: resources/list names no session (their transcripts are a template), and a notice
    // would tell every client that someone started one.
    session.open();
    return session;
  }

  send(session: AgentSession, prompt: string, ctx: CallContext): { turn: Turn; ahead: number } {
    const ahead = session.queued.length + (session.current ? 1 : 0);
    return { turn: session.send(prompt, this.sourceOf(ctx)), ahead };
  }

  async release(session: AgentSession, note: string): Promise<{ wasWorking: boolean; dropped: number }> {
    const outcome = await session.release(note);
    await this.stopUnused(session.config, session.owner);
    this.transcriptChanged(session);
    return outcome;
  }

  override background(): BackgroundWork[] {
    return [...this.sessions.values()].map((session) => ({
      kind: "agent",
      id: session.id,
      owner: session.owner,
      state: session.status,
      title: `${session.config.name} in ${session.cwd}`,
      startedAt: session.createdAt,
      endedAt: null,
    }));
  }

  protected override listResourceTemplates(): ResourceTemplate[] {
    return AGENTS_RESOURCE_TEMPLATES;
  }

  protected override async read(uri: string, ctx: CallContext): Promise<ReadResourceResult | undefined> {
    return readAgentsResource(this, uri, ctx);
  }

  /** Shutdown (and close_child_session where clients are not told apart): every session released, every agent process stopped. */
  protected async stopAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => session.release("the agents child was closed")));
    await Promise.all([...this.agents.values()].map((entry) => entry.processes.stopAll()));
  }

  /** close_child_session("agents") by one principal: its own sessions are released, no one else's. */
  protected override async stopOwnedBy(principal: string): Promise<void> {
    const mine = [...this.sessions.values()].filter((session) => session.owner === principal);
    await Promise.all(mine.map((session) => this.release(session, "the agents child was closed")));
  }

  private entry(name: string | undefined): AgentEntry {
    const chosen = name ?? (this.agents.size === 1 ? [...this.agents.keys()][0] : undefined);
    const entry = chosen === undefined ? undefined : this.agents.get(chosen);
    if (entry) return entry;
    const known = this.agentNames.map((known) => JSON.stringify(known)).join(", ");
    throw new GaggleError(
      "INVALID_ARGS",
      name === undefined ? `name the agent: one of ${known}` : `no agent named "${name}"; the agents are ${known}`,
      {
        hint: "[agents.NAME] tables in gaggle's config define them",
      },
    );
  }

  /** A prompt's permission questions go to the client that sent it: in its call when one is in flight, else to its session. */
  private sourceOf(ctx: CallContext, ask?: Ask): PromptSource {
    const clientSession = ctx.caller?.sessionId;
    const toSession: Ask | undefined =
      clientSession === undefined ? undefined : (request, signal, timeoutMs) => this.switchboard.ask(clientSession, request, signal, timeoutMs);
    return { clientSession, ask: ask ?? toSession };
  }

  /**
   * Subscribers hear of `session`'s transcript only while they may read it: asked at each change, since a config edit
   * may narrow gateway.visibility after someone subscribed.
   */
  private transcriptChanged(session: AgentSession): void {
    this.events.resourceUpdated(this.name, transcriptUri(session.id), (principal) => this.visibility.sees(session.owner, principal));
  }

  private hostFor(entry: AgentEntry, owner: string): SessionHost {
    return {
      process: () => entry.processes.of(owner),
      terminals: this.terminals,
      transcriptChanged: (session) => this.transcriptChanged(session),
      turnEnded: (session, turn) => this.turnEnded(session, turn),
      idle: (session) => void this.release(session, `idle for ${formatDuration(entry.config.idleReleaseMinutes * 60_000)} (idle_release_minutes)`),
      // A principal whose only session failed to start has no use for the process it started.
      failed: (session) => void this.stopUnused(session.config, session.owner),
    };
  }

  /** `owner`'s process of an agent ended on its own: that principal's live sessions of it lose their ACP sessions. */
  processLost(config: AgentConfig, owner: string, why: string): void {
    for (const session of this.sessions.values()) {
      if (session.config === config && session.owner === owner && session.live) session.processLost(why);
    }
  }

  /**
   * `owner`'s process of an agent ends with that principal's last live session of it; `config` is the sessions',
   * which a retired agent no longer has.
   */
  private async stopUnused(config: AgentConfig, owner: string): Promise<void> {
    const entry = this.agents.get(config.name);
    if (entry?.config !== config) return;
    if ([...this.sessions.values()].some((session) => session.config === config && session.owner === owner && session.live)) return;
    await entry.processes.stop(owner);
  }

  private turnEnded(session: AgentSession, turn: Turn): void {
    const uri = transcriptUri(session.id);
    const took = turn.startedAt && turn.endedAt ? turn.endedAt.getTime() - turn.startedAt.getTime() : 0;
    const data = {
      message: `agent session ${session.id} (${session.config.name}) finished prompt ${turn.number} (${turn.state}${turn.problem ? `: ${turn.problem}` : ""}) after ${formatDuration(took)}; get_agent_output or ${uri} has its transcript`,
      session: session.id,
      agent: session.config.name,
      prompt: turn.number,
      status: turn.state,
      stop_reason: turn.stopReason ?? null,
      duration_ms: took,
      queued: session.queued.length,
      output: uri,
    };
    const level = turn.state === "completed" ? "info" : "warning";
    if (turn.source.clientSession !== undefined)
      this.events.notify(turn.source.clientSession, { log: { level, logger: this.name, data }, resourceUpdated: uri });
  }

  /** Released sessions keep their transcripts up to max_sessions with the live ones; then whoever keeps most loses its oldest. */
  private prune(): void {
    for (const { config } of this.agents.values()) {
      const all = [...this.sessions.values()].filter((session) => session.config.name === config.name);
      for (const gone of recordsToForget(all, config.maxSessions, ownerOf, isReleased)) this.sessions.delete(gone.id);
    }
  }
}

export function principalOf(ctx: CallContext): string {
  return ctx.caller?.principal ?? LOCAL_PRINCIPAL;
}

const ownerOf = (session: AgentSession): string => session.owner;
const isReleased = (session: AgentSession): boolean => !session.live;
