// gaggle as the OAuth client of one remote child. The SDK runs the flows (discovery, registration, PKCE, token
// requests, refresh, step-up); this is where their state lives and where a person is asked to sign in.
import { randomUUID } from "node:crypto";
import { auth, type AddClientAuthentication, type OAuthClientProvider, type OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { createPrivateKeyJwtAuth } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { OAuthConfig } from "../../config/index.js";
import { GaggleError } from "../../shared/errors.js";
import { lazyLogger } from "../../shared/log.js";
import { identityAssertionGrant, JWT_BEARER_GRANT } from "./enterprise.js";
import { checkMetadataIssuer } from "./issuer.js";
import { NoSignInOffered } from "./no-sign-in.js";
import { reaching } from "./reaching.js";
import { REFRESH_TIMEOUT_MS } from "./refresh-lock.js";
import { signInCommand } from "./sign-in-command.js";
import { coversScopes, unionOfScopes } from "./scopes.js";
import { due, futileStepUp, usable, whySignInIsNeeded } from "./stored-sign-in.js";
import type { TokenStore } from "./token-store.js";

/** A sign-in under way (`gaggle auth login`): where the browser comes back to, and how the user is sent off. */
export interface SignInFlow {
  /** The loopback URL the authorization server redirects to. */
  redirectUrl: string;
  /** The state the redirect must carry back. */
  state: string;
  /** Shows the user the authorization URL (printed, and opened in a browser where there is one). */
  open(url: URL): void | Promise<void>;
}

/** The child needs a person to sign in; nothing gaggle can do alone (no refresh token, or it was refused). */
export function authRequired(child: { name: string; configFile: string }, why: string): GaggleError {
  return new GaggleError("AUTH_REQUIRED", `${child.name} needs you to sign in: ${why}`, { hint: `run: ${signInCommand(child)}` });
}

const log = lazyLogger({ subsystem: "oauth" });

/** Stands in while no sign-in is under way: a flow that needs one stops before anything leaves gaggle. */
const NO_FLOW_REDIRECT = "http://127.0.0.1/gaggle-sign-in";

/**
 * Without a SignInFlow (a running gateway), stored tokens are used and refreshed, and the client credentials
 * grant runs on its own; whatever needs a person (registration, the authorization page) fails with AUTH_REQUIRED.
 */
export class ChildOAuthProvider implements OAuthClientProvider {
  /**
   * Whether the stored discovery is to be done again before it is used: at the start of a sign-in, and after
   * the child answered 401 (it may now name another authorization server, SEP-2352).
   */
  private rediscover: boolean;

  /**
   * A client registered during a sign-in, stored only with the tokens it obtains: a sign-in given up halfway
   * leaves the client and tokens stored before it (whose refresh token belongs to that client) as they were.
   */
  private pendingClient: OAuthClientInformationMixed | undefined;

  /**
   * The refresh under way, and the access token it replaces: every request that holds that token (one it found due,
   * or one the child refused) waits for it rather than refreshing again.
   */
  private refreshing: { replaces: string; done: Promise<void> } | undefined;

  /**
   * Set while the refresh this provider runs is under way (one at a time), with the access token it replaces: the
   * one time the refresh token is handed to the SDK. The SDK's own answer to a 401 would otherwise refresh beside it,
   * with a refresh token that refresh has used up. An authorization server that rotates refresh tokens takes a used
   * one coming back for a stolen one and revokes the whole grant (RFC 9700 section 4.14), which signs the person out.
   * A field, not an AsyncLocalStorage: entering one turns on Node's promise hooks for the rest of the process, which
   * doubles what every await costs.
   */
  private ownRefresh: { replaces: string } | undefined;

  /** Set when the client proves itself with a signed JWT (private_key_jwt) rather than a secret or nothing. */
  readonly addClientAuthentication?: AddClientAuthentication;

  private readonly child: string;

  constructor(
    /** The child's name, and the config file it is written in, for the command a person is told to run. */
    private readonly who: { name: string; configFile: string },
    private readonly config: OAuthConfig | undefined,
    private readonly store: TokenStore,
    private readonly flow?: SignInFlow,
  ) {
    this.child = who.name;
    this.rediscover = flow !== undefined;
    const { clientId, privateKey } = config ?? {};
    if (privateKey && clientId !== undefined) {
      this.addClientAuthentication = createPrivateKeyJwtAuth({
        issuer: clientId,
        subject: clientId,
        privateKey: privateKey.pem,
        alg: privateKey.alg,
      });
    }
  }

  /**
   * What the child's refusal of a request says: after a 401 the discovery is done again. The scopes its
   * challenge names (a 401's, or a 403 `insufficient_scope`'s: those the token lacks) are what the next sign-in
   * (or client credentials grant) asks for, beside those asked before (SEP-2350); until a grant covers them the
   * refresh token is not used, since a refresh cannot widen a grant.
   */
  async noteRefusal(status: number, challenge: { error?: string; scope?: string }): Promise<GaggleError | undefined> {
    if (status === 401) this.rediscover = true;
    const challenged = status === 401 || (status === 403 && challenge.error === "insufficient_scope");
    if (!challenged || !challenge.scope) return undefined;
    const { tokens, scopeAsked } = await this.store.read();
    if (status === 403 && tokens && coversScopes(unionOfScopes(tokens.scope, scopeAsked), challenge.scope)) {
      return futileStepUp(this.child, challenge.scope, coversScopes(tokens.scope ?? scopeAsked, challenge.scope));
    }
    await this.store.update((stored) => ({
      ...stored,
      scopeWanted: unionOfScopes(stored.scopeAsked ?? stored.tokens?.scope, stored.scopeWanted, challenge.scope),
    }));
    return undefined;
  }

  private get unattended(): boolean {
    return this.config?.grant === "client_credentials" || this.config?.grant === "enterprise";
  }

  get redirectUrl(): string | undefined {
    return this.unattended ? undefined : (this.flow?.redirectUrl ?? NO_FLOW_REDIRECT);
  }

  get clientMetadataUrl(): string | undefined {
    return this.config?.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata & { application_type: string } {
    const scope = this.config?.scopes.join(" ");
    return {
      client_name: "gaggle",
      // A command-line client on the user's machine, redirected to loopback (SEP-837).
      application_type: "native",
      redirect_uris: this.unattended ? [] : [this.redirectUrl!],
      grant_types: !this.unattended
        ? ["authorization_code", "refresh_token"]
        : this.config?.grant === "enterprise"
          ? [JWT_BEARER_GRANT]
          : ["client_credentials"],
      response_types: this.unattended ? [] : ["code"],
      token_endpoint_auth_method: this.config?.privateKey
        ? "private_key_jwt"
        : this.config?.clientSecret !== undefined
          ? "client_secret_basic"
          : "none",
      ...(scope && { scope }),
    };
  }

  state(): string {
    return this.flow?.state ?? randomUUID();
  }

  /**
   * The configured client, else the one registered before (dropped when it was registered for another redirect
   * URL: each sign-in may listen on another port). Registering anew needs a sign-in under way.
   */
  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const { clientId, clientSecret } = this.config ?? {};
    if (clientId !== undefined) return { client_id: clientId, ...(clientSecret !== undefined && { client_secret: clientSecret }) };
    if (this.pendingClient) return this.pendingClient;
    const { client: stored, discovery } = await this.store.read();
    const redirects = (stored as { redirect_uris?: unknown } | undefined)?.redirect_uris;
    const fits = !this.flow || !Array.isArray(redirects) || redirects.includes(this.flow.redirectUrl);
    // A registration belongs to the authorization server it was made with (SEP-2352).
    const registeredWith = (stored as { issuer?: unknown } | undefined)?.issuer;
    const moved = typeof registeredWith === "string" && discovery !== undefined && registeredWith !== discovery.authorizationServerUrl;
    if (stored && fits && !moved) return stored;
    // A client metadata document serves as the client where the server takes one; registering needs a person.
    const documentServes =
      this.clientMetadataUrl !== undefined && discovery?.authorizationServerMetadata?.client_id_metadata_document_supported === true;
    if (!this.flow && !documentServes) {
      throw authRequired(
        this.who,
        moved
          ? `its authorization server is now ${discovery.authorizationServerUrl} (it was ${registeredWith}), where gaggle has no client registered yet`
          : "gaggle has no client registered with its authorization server yet",
      );
    }
    return undefined;
  }

  /**
   * A registration is kept (during a sign-in, once it has tokens); a client from the config stays there (its
   * secret is not copied to disk).
   */
  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    if (this.config?.clientId !== undefined) return;
    if (this.flow) this.pendingClient = client;
    else await this.store.update((stored) => ({ ...stored, client }));
  }

  /**
   * None during a sign-in: a person asked for a new grant, and the stored one is neither refreshed in its place nor
   * dropped when its refresh fails. The refresh token only inside this provider's own refresh (see `ownRefresh`).
   */
  async tokens(): Promise<OAuthTokens | undefined> {
    if (this.flow) return undefined;
    const tokens = usable(await this.store.read());
    if (tokens?.refresh_token === undefined || this.ownRefresh) return tokens;
    const { refresh_token: _refreshedHere, ...rest } = tokens;
    return rest;
  }

  /**
   * The access token to send in place of `sent` (the one on the request): refreshed first when it expires within
   * the next minute (or tenth of its life, if shorter) and a refresh token is at hand, so that a request does not go
   * out only to be refused. Undefined when there is nothing newer than `sent`.
   */
  async freshAccessToken(sent: string, serverUrl: URL, fetchFn: FetchLike): Promise<string | undefined> {
    const tokens = usable(await this.store.read());
    if (!tokens || !due(tokens)) return tokens && tokens.access_token !== sent ? tokens.access_token : undefined;
    await this.refreshReplacing(tokens.access_token, serverUrl, fetchFn);
    return this.newerThan(sent);
  }

  /**
   * The access token to send again a request the child refused (401) with `refused`: the one a refresh that
   * replaced it brought (this provider's, or one under way, which the request waits for), else one refreshed now.
   * Undefined when there is none (no refresh token, or the refresh failed): the refusal stands.
   */
  async accessTokenAfterRefusal(refused: string, serverUrl: URL, fetchFn: FetchLike): Promise<string | undefined> {
    if (this.flow) return undefined;
    await this.refreshReplacing(refused, serverUrl, fetchFn);
    return this.newerThan(refused);
  }

  /**
   * Refreshes the tokens stored if their access token is still `replaced` once the refresh starts, one refresh at a
   * time: a request that read the tokens before another refresh replaced them (or while one is under way) gets that
   * refresh's tokens and sends no refresh token of its own, since the one it read may be used up. One at a time in
   * this process, and across the processes that share the token file (under its lock); the requests of a refresh
   * are given up after REFRESH_TIMEOUT_MS, well before another process takes the lock over as stale. A refresh that
   * fails leaves the request to its refusal.
   */
  private async refreshReplacing(replaced: string, serverUrl: URL, fetchFn: FetchLike): Promise<void> {
    for (;;) {
      const running = this.refreshing;
      if (running === undefined) break;
      await running.done;
      if (running.replaces === replaced) return;
    }
    const stillToReplace = async () => {
      const stored = usable(await this.store.read());
      return stored?.access_token === replaced && stored.refresh_token !== undefined;
    };
    const done = (async () => {
      if (!(await stillToReplace())) return;
      // Another process may refresh with the same refresh token: the tokens are read again under the lock that
      // process holds too, and what it saved is taken rather than refreshed again.
      await this.store.whileRefreshing(
        async () => {
          if (!(await stillToReplace())) return;
          const timed = givenUpAfter(fetchFn, AbortSignal.timeout(REFRESH_TIMEOUT_MS));
          this.ownRefresh = { replaces: replaced };
          try {
            await auth(this, { serverUrl, fetchFn: timed });
          } finally {
            this.ownRefresh = undefined;
          }
        },
        (holder) => log.info({ child: this.child, holder: holder?.pid }, "another refresh of this sign-in is under way; waiting for its tokens"),
      );
    })()
      .catch(() => {})
      .finally(() => (this.refreshing = undefined));
    this.refreshing = { replaces: replaced, done };
    await done;
  }

  /** The access token stored, if it is not `sent`. */
  private async newerThan(sent: string): Promise<string | undefined> {
    const stored = (await this.store.read()).tokens?.access_token;
    return stored === sent ? undefined : stored;
  }

  /** A new grant answers what was wanted; the scopes of the grant are in the tokens. */
  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const client = this.pendingClient;
    this.pendingClient = undefined;
    await this.store.update(({ scopeWanted: _met, ...stored }) => ({
      ...stored,
      ...(client && { client }),
      tokens: { ...tokens, saved_at: Date.now() },
    }));
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (!this.flow) throw authRequired(this.who, whySignInIsNeeded(await this.store.read()));
    await this.flow.open(url);
  }

  /** Kept only for a sign-in under way: a gateway's attempt ends before the redirect, and must not replace the verifier of a `gaggle auth login` running beside it. */
  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    if (!this.flow) return;
    await this.store.update((stored) => ({ ...stored, codeVerifier }));
  }

  async codeVerifier(): Promise<string> {
    const verifier = (await this.store.read()).codeVerifier;
    if (verifier === undefined) throw authRequired(this.who, "no sign-in is under way");
    return verifier;
  }

  /** Inside this provider's refresh, tokens that are no longer the ones it replaces (a sign-in saved them meanwhile) are kept. */
  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "all") return this.store.forget();
    const key = ({ client: "client", tokens: "tokens", verifier: "codeVerifier", discovery: "discovery" } as const)[scope];
    const refreshing = this.ownRefresh;
    await this.store.update((stored) => {
      if (refreshing && key === "tokens" && stored.tokens?.access_token !== refreshing.replaces) return stored;
      const { [key]: _dropped, ...rest } = stored;
      return { ...rest, resource: rest.resource };
    });
  }

  /**
   * The grants that need no person. They ask for the configured scopes (`scope`, from the client metadata), else
   * for the scopes the child's protected-resource metadata lists. The enterprise grant first gets its assertion
   * from the identity provider, for this authorization server and this child.
   */
  async prepareTokenRequest(scope?: string): Promise<URLSearchParams | undefined> {
    if (!this.unattended) return undefined;
    const { scopeWanted, discovery, resource } = await this.store.read();
    const asked = scopeWanted ?? (scope || discovery?.resourceMetadata?.scopes_supported?.join(" "));
    await this.store.update((stored) => ({ ...stored, ...(asked && { scopeAsked: asked }) }));
    const enterprise = this.config?.enterprise;
    if (!enterprise) return new URLSearchParams({ grant_type: "client_credentials", ...(asked && { scope: asked }) });
    const target = {
      audience: discovery?.authorizationServerMetadata?.issuer ?? discovery?.authorizationServerUrl ?? resource,
      resource: discovery?.resourceMetadata?.resource ?? resource,
      scope: asked,
    };
    const assertion = await identityAssertionGrant(enterprise, target, reaching());
    return new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion, ...(asked && { scope: asked }) });
  }

  /**
   * A child without an `oauth` table that answers 401 but publishes no OAuth metadata has nothing to sign in
   * to: its refusal is about the url or the headers, and is told so.
   */
  async saveDiscoveryState(discovery: OAuthDiscoveryState): Promise<void> {
    if (!discovery.resourceMetadata && !discovery.authorizationServerMetadata && this.config === undefined) {
      throw new NoSignInOffered();
    }
    checkMetadataIssuer(discovery);
    // Cleared before the write: a 401 noted while it runs asks for discovery again, and is not overwritten.
    this.rediscover = false;
    try {
      await this.store.update((stored) => ({ ...stored, discovery }));
    } catch (error) {
      this.rediscover = true;
      throw error;
    }
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return this.rediscover ? undefined : (await this.store.read()).discovery;
  }
}

/** `fetchFn`, its requests given up once `deadline` aborts (and still when their own signal does). */
function givenUpAfter(fetchFn: FetchLike, deadline: AbortSignal): FetchLike {
  return (url, init) => fetchFn(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline });
}
