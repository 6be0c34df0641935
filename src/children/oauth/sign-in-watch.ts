// Whether a person has signed in to a child since it was refused for want of a sign-in: `gaggle auth login` runs
// in another process and writes the child's token file, which the running gateway then reads. While the child
// waits on a sign-in, the token file's folder is watched, so that a sign-in made elsewhere starts the child at once
// (and its clients hear that its lists changed) rather than at its next call.
import { watch, type FSWatcher } from "node:fs";
import { mkdir } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { Logger } from "../../shared/log.js";
import type { TokenStore } from "./token-store.js";

export class SignInWatch {
  /** The access token the child was refused with (undefined: none stored); null while it has not been refused. */
  private refusedWith: Promise<string | undefined> | null = null;
  /** The access token stored when the start being made began. */
  private attemptedWith: Promise<string | undefined> | undefined;
  private watcher: FSWatcher | undefined;
  /** While the folder is being made, before it is watched. */
  private preparing = false;

  /** @param signedIn called when tokens other than those refused appear while the child waits on a sign-in. */
  constructor(
    private readonly store: TokenStore | undefined,
    private readonly log: Logger,
    private readonly signedIn: () => void,
  ) {}

  /**
   * A start begins: the tokens stored now are what a refusal of it was refused with. Read after the refusal instead,
   * a sign-in written between the two would count as refused, and the child would wait out its back-off.
   */
  attempting(): void {
    this.attemptedWith = this.store ? this.token() : undefined;
  }

  /** Notes the outcome of a start: `needsSignIn` when it failed with AUTH_REQUIRED. */
  started(needsSignIn: boolean): void {
    const attemptedWith = this.attemptedWith;
    this.attemptedWith = undefined;
    if (!needsSignIn || !this.store) {
      this.refusedWith = null;
      this.close();
      return;
    }
    this.refusedWith = attemptedWith ?? this.token();
    void this.watch(this.store);
  }

  /** True when new tokens were stored since the refusal: a start is worth trying again at once. */
  async signedInSince(): Promise<boolean> {
    const refused = this.refusedWith;
    if (refused === null) return false;
    const [before, now] = await Promise.all([refused, this.token()]);
    // A start or a close meanwhile ended the wait.
    return this.refusedWith === refused && now !== before;
  }

  /** Stops watching; the child is closed or no longer waits on a sign-in. */
  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

  /** Undefined too when the file cannot be read: without tokens to compare, the child waits out its back-off. */
  private token(): Promise<string | undefined> {
    if (!this.store) return Promise.resolve(undefined);
    return this.store.read().then(
      (stored) => stored.tokens?.access_token,
      () => undefined,
    );
  }

  /**
   * The folder, not the file: the file is replaced by a rename (and may not exist yet). A sign-in writes the file
   * more than once (the client's registration, the PKCE verifier, then the tokens): only new tokens count.
   */
  private async watch(store: TokenStore): Promise<void> {
    if (this.watcher || this.preparing) return;
    const folder = dirname(store.file);
    const file = basename(store.file);
    this.preparing = true;
    try {
      await mkdir(folder, { recursive: true, mode: 0o700 });
    } catch (error) {
      // Without the watch, a sign-in made elsewhere is still used at the child's next call.
      this.log.warn({ err: error, folder }, "cannot watch the sign-in folder");
      return;
    } finally {
      this.preparing = false;
    }
    // The child started or closed while the folder was made.
    if (this.refusedWith === null || this.watcher) return;
    try {
      // Not persistent: a gateway that has nothing else to do does not stay up for this. (fs.watch has no
      // asynchronous form; it registers the watch once per refusal, not per request.)
      this.watcher = watch(folder, { persistent: false }, (_event, name) => {
        if (name !== null && name !== file) return;
        void this.signedInSince().then((signedIn) => {
          if (signedIn) this.signedIn();
        });
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
