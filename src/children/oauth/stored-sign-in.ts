// What a stored sign-in can do, read from the token file's record: whether its refresh token can serve, whether its
// access token is due for a refresh, and why a person must sign in again.
import { GaggleError } from "../../shared/errors.js";
import { coversScopes } from "./scopes.js";
import type { StoredSignIn } from "./token-store.js";

/** How long before its expiry an access token is refreshed, at most. */
const REFRESH_AHEAD_MS = 60_000;

/**
 * The tokens stored, less a refresh token that cannot serve: one a call was refused for lacking scopes its grant
 * does not cover (a refresh cannot widen a grant). A token answer without `scope` granted what was asked (RFC 6749
 * section 5.1).
 */
export function usable({ tokens, scopeWanted, scopeAsked }: StoredSignIn): StoredSignIn["tokens"] {
  if (tokens === undefined || scopeWanted === undefined || coversScopes(tokens.scope ?? scopeAsked, scopeWanted)) return tokens;
  const { refresh_token: _unusable, ...rest } = tokens;
  return rest;
}

/** Whether the access token expires within the next minute (or tenth of its life, if shorter), with a refresh token at hand. */
export function due(tokens: NonNullable<StoredSignIn["tokens"]>): boolean {
  if (tokens.refresh_token === undefined || tokens.expires_in === undefined) return false;
  const ahead = Math.min(REFRESH_AHEAD_MS, (tokens.expires_in * 1000) / 10);
  return tokens.saved_at + tokens.expires_in * 1000 - ahead <= Date.now();
}

/** What AUTH_REQUIRED says when a running gateway cannot go on without a person. */
export function whySignInIsNeeded({ tokens, scopeWanted, scopeAsked }: StoredSignIn): string {
  const granted = tokens?.scope ?? scopeAsked;
  if (tokens && scopeWanted && !coversScopes(granted, scopeWanted)) {
    return `a call needs the scopes "${scopeWanted}", more than its sign-in granted ("${granted ?? ""}")`;
  }
  return "its tokens are missing, expired or refused";
}

/**
 * The child refused a call for lacking scopes its sign-in already holds, or that its sign-in asked for and was not
 * granted: signing in again would bring the same grant, so the call fails at once rather than sending a person
 * round the loop (the step-up retry limit).
 */
export function futileStepUp(child: string, scope: string, held: boolean): GaggleError {
  const why = held ? "which its sign-in already holds" : "which its last sign-in asked for and the authorization server did not grant";
  return new GaggleError(
    "PERMISSION_DENIED",
    `${child} refused the request for lacking the scopes "${scope}", ${why}; signing in again would not change that`,
    {
      hint: "the account signed in is not allowed this: sign in with another account (gaggle auth logout, then login), or ask the server's administrator",
    },
  );
}
