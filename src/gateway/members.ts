// Who a connection speaks for: secrets naming a team member, issued to the agents gaggle starts, in their URLs.
import { randomBytes } from "node:crypto";
import { memberPrincipal, type MemberIdentity } from "../children/child.js";
import type { MemberUrl, MemberUrls } from "../virtual/index.js";

/**
 * A member connects back to gaggle on a URL that carries its secret; every session opened with that secret
 * acts as that member, and no other secret makes it so. The URL's base (scheme, host and port of a listener)
 * comes from whoever serves gaggle, asked for only when the first member needs it.
 */
export class MemberRegistry implements MemberUrls {
  private readonly bySecret = new Map<string, MemberIdentity>();
  /**
   * Each member principal's lead and team, kept after its URL is revoked: what the member started may outlive its
   * membership, and stays its lead's and its team's to see.
   */
  private readonly teams = new Map<string, { lead: string; teamId: string }>();

  constructor(private readonly base: () => Promise<string>) {}

  async urlFor(identity: MemberIdentity, lead: string): Promise<MemberUrl> {
    const base = await this.base();
    const secret = randomBytes(24).toString("base64url");
    this.bySecret.set(secret, identity);
    this.teams.set(memberPrincipal(identity), { lead, teamId: identity.teamId });
    return { url: `${base}${memberPath(secret)}`, revoke: () => this.bySecret.delete(secret) };
  }

  resolve(secret: string): MemberIdentity | undefined {
    return this.bySecret.get(secret);
  }

  leadOf(member: string): string | undefined {
    return this.teams.get(member)?.lead;
  }

  /**
   * The principal whose teams `principal` works in, through members that lead teams of their own: a token's name
   * or the local client's, never a member's. `principal` itself when it is no member.
   */
  rootOf(principal: string): string {
    let at = principal;
    // Each member's lead existed before it, so the chain ends; the bound only guards that.
    for (let steps = 0; steps <= this.teams.size; steps++) {
      const lead = this.teams.get(at)?.lead;
      if (lead === undefined) return at;
      at = lead;
    }
    return at;
  }

  /** Every member principal of a team `lead` leads, and of the teams those members lead in turn. */
  ledBy(lead: string): string[] {
    const found: string[] = [];
    const leads = [lead];
    for (let next = 0; next < leads.length; next++) {
      for (const [member, team] of this.teams) {
        if (team.lead !== leads[next] || found.includes(member)) continue;
        found.push(member);
        leads.push(member);
      }
    }
    return found;
  }

  sameTeam(member: string, other: string): boolean {
    const [one, two] = [this.teams.get(member), this.teams.get(other)];
    return one !== undefined && two !== undefined && one.lead === two.lead && one.teamId === two.teamId;
  }
}

/** The path a member's MCP session uses: the secret is its credential, in place of the bearer token. */
function memberPath(secret: string): string {
  return `/members/${secret}/mcp`;
}

/** The secret of a member path, or undefined for any other path. */
export function memberSecretOf(path: string): string | undefined {
  return /^\/members\/([A-Za-z0-9_-]{16,})\/mcp$/.exec(path)?.[1];
}
