// Who sees the work a client started (processes, goslings, teams): its principal, or everyone when the config widens it.
import type { GaggleConfig } from "../config/index.js";

export class Visibility {
  constructor(
    /** "all": every principal sees every principal's work (gateway.visibility). */
    private readonly everyone: boolean,
    /**
     * Whether lists that no caller asks for in particular (resources/list) may name each piece of work: only when
     * every client could read it anyway, since such a list is the same for every client.
     */
    readonly listsWork: boolean,
  ) {}

  static of(config: GaggleConfig): Visibility {
    const everyone = config.gateway.visibility === "all";
    return new Visibility(everyone, everyone || Object.keys(config.gateway.authTokens ?? {}).length === 0);
  }

  /** Whether `viewer` may list and read work `owner` started (null: every operator's). */
  sees(owner: string | null, viewer: string): boolean {
    return this.everyone || owner === null || owner === viewer;
  }
}
