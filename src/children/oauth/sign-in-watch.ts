// Whether a person has signed in to a child since it was refused for want of a sign-in: `gaggle auth login` runs
// in another process and writes the child's token file, which the running gateway then reads. While the child
// waits on a sign-in, the token file's folder is watched, so that a sign-in made elsewhere starts the child at once
// (and its clients hear that its lists changed) rather than at its next call.
import { mkdirSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import type { Logger } from "../../shared/log.js";
import type { TokenStore } from "./token-store.js";

export class SignInWatch {
  /** The access token the child was refused with (undefined: none stored); null while it has not been refused. */
  private refusedWith: string | undefined | null = null;
  private watcher: FSWatcher | undefined;

  /** @param signedIn called when tokens other than those refused appear while the child waits on a sign-in. */
  constructor(
    private readonly store: TokenStore | undefined,
    private readonly log: Logger,
    private readonly signedIn: () => void,
  ) {}

  /** Notes the outcome of a start: `needsSignIn` when it failed with AUTH_REQUIRED. */
  started(needsSignIn: boolean): void {
    if (!needsSignIn || !this.store) {
      this.refusedWith = null;
      this.close();
      return;
    }
    this.refusedWith = this.token();
    this.watch(this.store);
  }

  /** True when new tokens were stored since the refusal: a start is worth trying again at once. */
  signedInSince(): boolean {
    return this.refusedWith !== null && this.token() !== this.refusedWith;
  }

  /** Stops watching; the child is closed or no longer waits on a sign-in. */
  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

  private token(): string | undefined {
    return this.store?.read().tokens?.access_token;
  }

  /**
   * The folder, not the file: the file is replaced by a rename (and may not exist yet). A sign-in writes the file
   * more than once (the client's registration, the PKCE verifier, then the tokens): only new tokens count.
   */
  private watch(store: TokenStore): void {
    if (this.watcher) return;
    const folder = dirname(store.file);
    const file = basename(store.file);
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      // Not persistent: a gateway that has nothing else to do does not stay up for this.
      this.watcher = watch(folder, { persistent: false }, (_event, name) => {
        if ((name === null || name === file) && this.signedInSince()) this.signedIn();
      });
    } catch (error) {
      // Without the watch, a sign-in made elsewhere is still used at the child's next call.
      this.log.warn({ err: error, folder }, "cannot watch the sign-in folder");
      return;
    }
    this.watcher.on("error", (error) => {
      this.log.warn({ err: error, folder }, "stopped watching the sign-in folder");
      this.close();
    });
  }
}
