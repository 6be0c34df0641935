// One remote child's sign-in on disk: its client registration, its tokens, the PKCE verifier of a flow under way.
// One file per child under the state dir, mode 0600, replaced atomically, and bound to the child's URL: what was
// obtained for one URL is never read back for another. The file is read again whenever it was replaced (by this
// process or another, such as `gaggle auth login`). A gateway reads and writes it without blocking the event loop
// (the state dir may be on a slow mount); updates to one file in this process run one at a time, so that an update
// reads what the one before it wrote. A refresh of its tokens runs under a lock beside it, one at a time across every
// process that uses the file (see refresh-lock.ts).
import { readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { writeFileAtomicAsync } from "../../shared/atomic-file.js";
import { isObject } from "../../shared/json.js";
import { withLock, type LockHolder } from "./refresh-lock.js";

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

type Change = (stored: StoredSignIn) => StoredSignIn;

const FILE = { mode: 0o600, dirMode: 0o700 };

/**
 * The last update or removal asked for, per file: the next one starts once it has ended. Keyed by the file, not the
 * store, since a child's provider and a sign-in it runs each hold a store of the same file; an entry is dropped once
 * its queue is empty.
 */
const queues = new Map<string, Promise<void>>();

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
  async read(): Promise<StoredSignIn> {
    const stamp = stampOf(await stat(this.file, { bigint: true }).catch(missing));
    if (stamp === undefined) return { resource: this.resource };
    if (this.parsed?.stamp === stamp) return this.parsed.stored;
    // The stamp is taken before the text is read, so the text is never older than the stamp it is kept with.
    return this.keep(stamp, await readFile(this.file, "utf8").catch(() => undefined));
  }

  /**
   * Applies `change` to what is stored once the updates asked for before it have ended, and writes the result: a
   * temporary file of mode 0600, renamed over the old one.
   */
  update(change: Change): Promise<StoredSignIn> {
    return this.queued(async () => {
      const next = this.changed(change, await this.read());
      await writeFileAtomicAsync(this.file, JSON.stringify(next, null, 2), FILE);
      return next;
    });
  }

  /**
   * Runs `work` holding the lock of this file's refresh, which no other process (nor store of this file) holds at
   * once; `onWait` is told who holds it when `work` has to wait.
   */
  whileRefreshing<T>(work: () => Promise<T>, onWait?: (holder: LockHolder | undefined) => void): Promise<T> {
    return withLock(`${this.file}.lock`, work, onWait);
  }

  /** Removes the file, once the updates asked for before have ended. */
  forget(): Promise<void> {
    return this.queued(() => rm(this.file, { force: true }));
  }

  private changed(change: Change, stored: StoredSignIn): StoredSignIn {
    return { ...change(stored), resource: this.resource };
  }

  private keep(stamp: string, text: string | undefined): StoredSignIn {
    let stored: StoredSignIn = { resource: this.resource };
    try {
      const found: unknown = text === undefined ? undefined : JSON.parse(text);
      if (isObject(found) && found.resource === this.resource) stored = found as unknown as StoredSignIn;
    } catch {
      // Damaged: as if never signed in.
    }
    this.parsed = { stamp, stored };
    return stored;
  }

  private queued<T>(step: () => Promise<T>): Promise<T> {
    const result = (queues.get(this.file) ?? Promise.resolve()).then(step);
    const ended = result.then(
      () => {},
      () => {},
    );
    queues.set(this.file, ended);
    void ended.then(() => {
      if (queues.get(this.file) === ended) queues.delete(this.file);
    });
    return result;
  }
}

/** Changes whenever the file is replaced or removed; undefined while there is none. */
function stampOf(stat: { ino: bigint; mtimeNs: bigint } | undefined): string | undefined {
  return stat && `${stat.ino}:${stat.mtimeNs}`;
}

/** A file that is not there reads as nothing; any other failure (a folder that cannot be searched) is the caller's. */
function missing(error: NodeJS.ErrnoException): undefined {
  if (error.code === "ENOENT") return undefined;
  throw error;
}
