// Owns the running side of members: each one's gosling, its member URL, whether it is starting, and its state.
import type { CallContext } from "../../children/child.js";
import type { GooseChild } from "../goose/goose-child.js";
import type { Gosling, PromptEntry } from "../goose/gosling.js";
import type { MemberUrl, MemberUrls } from "../context.js";
import type { MemberRecord, TeamRecord } from "./records.js";

export type MemberState = "starting" | "working" | "idle" | "exited" | "removed";

interface Running {
  gosling?: Gosling;
  url?: MemberUrl;
  /** Set while its worktree is made, its URL issued or its gosling launched. */
  starting: boolean;
}

export class Roster {
  private readonly running = new Map<string, Running>();
  private readonly byGosling = new Map<string, string>();

  constructor(
    private readonly goose: GooseChild,
    private readonly urls: MemberUrls,
  ) {}

  state(member: MemberRecord): MemberState {
    if (member.removed_at) return "removed";
    const running = this.running.get(member.agent_id);
    if (running?.starting) return "starting";
    const gosling = this.live(member.agent_id);
    if (!gosling) return "exited";
    return gosling.working ? "working" : "idle";
  }

  /** Its gosling, unless it has none or that one was released. */
  live(agentId: string): Gosling | undefined {
    const gosling = this.running.get(agentId)?.gosling;
    return gosling && gosling.status !== "released" ? gosling : undefined;
  }

  gosling(agentId: string): Gosling | undefined {
    return this.running.get(agentId)?.gosling;
  }

  /** The member a gosling belongs to, if any. */
  agentOf(gosling: Gosling): string | undefined {
    return this.byGosling.get(gosling.id);
  }

  isStarting(agentId: string): boolean {
    return this.running.get(agentId)?.starting === true;
  }

  /** Marks it starting while `work` runs (a worktree being made, a gosling launched). */
  async whileStarting<T>(agentId: string, work: () => Promise<T>): Promise<T> {
    const running = this.entry(agentId);
    running.starting = true;
    try {
      return await work();
    } finally {
      running.starting = false;
    }
  }

  /**
   * A gosling for the member, started on `prompt` with gaggle as its MCP extension on the member's own URL.
   * A member that had a gosling before continues its Goose session (`--resume` from the first turn).
   */
  async launch(team: TeamRecord, member: MemberRecord, prompt: string, ctx: CallContext): Promise<{ gosling: Gosling; entry: PromptEntry }> {
    const running = this.entry(member.agent_id);
    running.url ??= await this.urls.urlFor({ teamId: team.team_id, agentId: member.agent_id }, team.owner);
    const tokens = ["--with-streamable-http-extension", running.url.url, ...member.options];
    // The team's owner owns its members' goslings, whoever's call (or delivery) starts them.
    const launched = this.goose.launchGosling(prompt, tokens, ctx, "team_member", member.cwd, member.session ?? undefined, team.owner);
    running.gosling = launched.gosling;
    this.byGosling.set(launched.gosling.id, member.agent_id);
    member.session = launched.gosling.session;
    member.gosling_id = launched.gosling.id;
    return launched;
  }

  /** Its gosling is released (transcript kept) and its URL stops working. */
  async remove(member: MemberRecord, note: string): Promise<{ wasWorking: boolean }> {
    const running = this.running.get(member.agent_id);
    running?.url?.revoke();
    const gosling = this.live(member.agent_id);
    const outcome = gosling ? await this.goose.release(gosling, note) : { wasWorking: false };
    this.running.delete(member.agent_id);
    return { wasWorking: outcome.wasWorking };
  }

  /** Every member's gosling (of `agentIds` when given) is released; URLs stay valid, so a member restarted later can use its own. */
  async releaseAll(note: string, agentIds?: ReadonlySet<string>): Promise<void> {
    const live = [...this.running.keys()].filter((agentId) => agentIds?.has(agentId) ?? true).flatMap((agentId) => this.live(agentId) ?? []);
    await Promise.all(live.map((gosling) => this.goose.release(gosling, note)));
  }

  /** Forgets a member whose add failed. */
  forget(agentId: string): void {
    const running = this.running.get(agentId);
    running?.url?.revoke();
    if (running?.gosling) this.byGosling.delete(running.gosling.id);
    this.running.delete(agentId);
  }

  private entry(agentId: string): Running {
    let running = this.running.get(agentId);
    if (!running) this.running.set(agentId, (running = { starting: false }));
    return running;
  }
}
