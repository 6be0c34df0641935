// Who sees and stops the work a client started (processes, goslings, teams): its principal and the lead of the team
// it is a member of; the team's other members see it too; everyone sees it (seeing only) when the config widens it.
import type { GaggleConfig } from "../config/index.js";
import type { TeamLeads } from "./context.js";

export class Visibility {
  private constructor(
    /** The config in force, read at each question: the named tokens follow a reload. */
    private readonly config: () => GaggleConfig,
    private readonly teams: TeamLeads,
  ) {}

  /** Under `config`, or the config in force as a built-in child's context gives it. */
  static of(config: GaggleConfig | (() => GaggleConfig), teams: TeamLeads): Visibility {
    return new Visibility(typeof config === "function" ? config : () => config, teams);
  }

  /**
   * Whether lists that no caller asks for in particular (resources/list) may name each piece of work: only when
   * every client could read it anyway, since such a list is the same for every client.
   */
  get listsWork(): boolean {
    const { gateway } = this.config();
    return gateway.visibility === "all" || Object.keys(gateway.authTokens ?? {}).length === 0;
  }

  /** "all": every principal sees every principal's work (gateway.visibility). */
  private get everyone(): boolean {
    return this.config().gateway.visibility === "all";
  }

  /** Whether `viewer` may list and read work `owner` started (null: every operator's). */
  sees(owner: string | null, viewer: string): boolean {
    return this.everyone || owner === null || this.governs(owner, viewer) || this.teams.sameTeam(owner, viewer);
  }

  /** Whether `actor` may stop (kill, release, close) work `owner` started: its own, or a member's of a team it leads. */
  governs(owner: string, actor: string): boolean {
    return owner === actor || this.teams.leadOf(owner) === actor;
  }
}
