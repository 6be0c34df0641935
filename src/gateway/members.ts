// Who a connection speaks for: secrets naming a team member, issued to the agents gaggle starts.
import { randomBytes } from "node:crypto";
import type { MemberIdentity } from "../children/child.js";

/**
 * A member connects back to gaggle on a loopback URL that carries its secret; every session opened
 * with that secret acts as that member, and no other secret makes it so.
 */
export class MemberRegistry {
  private readonly bySecret = new Map<string, MemberIdentity>();

  issue(identity: MemberIdentity): string {
    const secret = randomBytes(24).toString("base64url");
    this.bySecret.set(secret, identity);
    return secret;
  }

  resolve(secret: string): MemberIdentity | undefined {
    return this.bySecret.get(secret);
  }

  revoke(secret: string): void {
    this.bySecret.delete(secret);
  }
}

/** The path a member's MCP session uses: the secret is its credential, in place of the bearer token. */
export function memberPath(secret: string): string {
  return `/members/${secret}/mcp`;
}

/** The secret of a member path, or undefined for any other path. */
export function memberSecretOf(path: string): string | undefined {
  return /^\/members\/([A-Za-z0-9_-]{16,})\/mcp$/.exec(path)?.[1];
}
