// One remote child's sign-in on disk: its client registration, its tokens, the PKCE verifier of a flow under way.
// One file per child under the state dir, mode 0600, replaced atomically, and bound to the child's URL: what was
// obtained for one URL is never read back for another.
import { readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { isObject } from "../../shared/json.js";

export interface StoredSignIn {
  /** The child's URL all of this was obtained for. */
  resource: string;
  client?: OAuthClientInformationMixed;
  /** As the token endpoint answered, with the time they were saved (ms since the epoch). */
  tokens?: OAuthTokens & { saved_at: number };
  codeVerifier?: string;
  discovery?: OAuthDiscoveryState;
  /** The scopes the last sign-in or client credentials grant asked for. */
  scopeAsked?: string;
  /** Scopes a call was refused for lacking (403 insufficient_scope), with those asked before: the next sign-in asks for them. */
  scopeWanted?: string;
}

export class TokenStore {
  readonly file: string;
  /** The file as last parsed, with the stamp it had: a request reads it once, and only a new file is parsed again. */
  private parsed: { stamp: string; stored: StoredSignIn } | undefined;

  constructor(
    stateDir: string,
    childName: string,
    private readonly resource: string,
  ) {
    this.file = join(stateDir, "oauth", `${encodeURIComponent(childName)}.json`);
  }

  /** What is stored for this child's URL; nothing when the file is missing, unreadable or was for another URL. */
  read(): StoredSignIn {
    const stamp = this.stamp();
    if (stamp === undefined) return { resource: this.resource };
    if (this.parsed?.stamp === stamp) return this.parsed.stored;
    let stored: StoredSignIn = { resource: this.resource };
    try {
      const found: unknown = JSON.parse(readFileSync(this.file, "utf8"));
      if (isObject(found) && found.resource === this.resource) stored = found as unknown as StoredSignIn;
    } catch {
      // Missing or damaged: as if never signed in.
    }
    this.parsed = { stamp, stored };
    return stored;
  }

  /** Applies `change` and writes the result: a temporary file of mode 0600, renamed over the old one. */
  update(change: (stored: StoredSignIn) => StoredSignIn): StoredSignIn {
    const next = { ...change(this.read()), resource: this.resource };
    writeFileAtomic(this.file, JSON.stringify(next, null, 2), { mode: 0o600, dirMode: 0o700 });
    return next;
  }

  /** Changes whenever the file is replaced or removed (by this process or another); undefined while there is none. */
  stamp(): string | undefined {
    const stat = statSync(this.file, { throwIfNoEntry: false, bigint: true });
    return stat && `${stat.ino}:${stat.mtimeNs}`;
  }

  forget(): void {
    rmSync(this.file, { force: true });
  }
}
