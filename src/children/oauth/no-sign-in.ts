// A remote child that refuses gaggle (401) and publishes no OAuth metadata: there is nothing to sign in to, so
// what it wants can only come from the config. Kept apart from the provider, which loads the SDK's OAuth code,
// so that the advice for a failed start can tell this refusal without loading it.

/** The refusal, with its status as a field. */
export class NoSignInOffered extends Error {
  override readonly name = "NoSignInOffered";
  readonly status = 401;

  constructor() {
    super("the server answered 401 (Unauthorized) and publishes no OAuth metadata (RFC 9728, RFC 8414), so there is nothing to sign in to");
  }
}
