// Whether a person has signed in to a child since it was refused for want of a sign-in: `gaggle auth login` runs
// in another process and writes the child's token file, which the running gateway then reads.
import type { TokenStore } from "./token-store.js";

export class SignInWatch {
  /** The token file's stamp when the child last failed for want of a sign-in; null while it has not. */
  private stampAtRefusal: string | undefined | null = null;

  constructor(private readonly store: TokenStore | undefined) {}

  /** Notes the outcome of a start: `needsSignIn` when it failed with AUTH_REQUIRED. */
  started(needsSignIn: boolean): void {
    this.stampAtRefusal = needsSignIn && this.store ? this.store.stamp() : null;
  }

  /** True when the token file changed since the refusal: a start is worth trying again at once. */
  signedInSince(): boolean {
    return this.stampAtRefusal !== null && this.store !== undefined && this.store.stamp() !== this.stampAtRefusal;
  }
}
