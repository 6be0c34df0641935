// gaggle as the OAuth client of one remote child. The SDK runs the flows (discovery, registration, PKCE, token
// requests, refresh, step-up); this is where their state lives and where a person is asked to sign in.
import { randomUUID } from "node:crypto";
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { OAuthConfig } from "../../config/index.js";
import { GaggleError } from "../../shared/errors.js";
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
export function authRequired(child: string, why: string): GaggleError {
  return new GaggleError("AUTH_REQUIRED", `${child} needs you to sign in: ${why}`, { hint: `run: gaggle auth login ${child}` });
}

/** Stands in while no sign-in is under way: a flow that needs one stops before anything leaves gaggle. */
const NO_FLOW_REDIRECT = "http://127.0.0.1/gaggle-sign-in";

/**
 * Without a SignInFlow (a running gateway), stored tokens are used and refreshed, and the client credentials
 * grant runs on its own; whatever needs a person (registration, the authorization page) fails with AUTH_REQUIRED.
 */
export class ChildOAuthProvider implements OAuthClientProvider {
  constructor(
    private readonly child: string,
    private readonly config: OAuthConfig | undefined,
    private readonly store: TokenStore,
    private readonly flow?: SignInFlow,
  ) {}

  private get unattended(): boolean {
    return this.config?.grant === "client_credentials";
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
      grant_types: this.unattended ? ["client_credentials"] : ["authorization_code", "refresh_token"],
      response_types: this.unattended ? [] : ["code"],
      token_endpoint_auth_method: this.config?.clientSecret !== undefined ? "client_secret_basic" : "none",
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
  clientInformation(): OAuthClientInformationMixed | undefined {
    const { clientId, clientSecret } = this.config ?? {};
    if (clientId !== undefined) return { client_id: clientId, ...(clientSecret !== undefined && { client_secret: clientSecret }) };
    const stored = this.store.read().client;
    const redirects = (stored as { redirect_uris?: unknown } | undefined)?.redirect_uris;
    const fits = !this.flow || !Array.isArray(redirects) || redirects.includes(this.flow.redirectUrl);
    if (stored && fits) return stored;
    if (!this.flow && !this.clientMetadataUrl) throw authRequired(this.child, "gaggle has no client registered with its authorization server yet");
    return undefined;
  }

  /** A registration is kept; a client from the config stays there (its secret is not copied to disk). */
  saveClientInformation(client: OAuthClientInformationMixed): void {
    if (this.config?.clientId !== undefined) return;
    this.store.update((stored) => ({ ...stored, client }));
  }

  tokens(): OAuthTokens | undefined {
    return this.store.read().tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.store.update((stored) => ({ ...stored, tokens: { ...tokens, saved_at: Date.now() } }));
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (!this.flow) throw authRequired(this.child, "its tokens are missing, expired or refused");
    await this.flow.open(url);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.store.update((stored) => ({ ...stored, codeVerifier }));
  }

  codeVerifier(): string {
    const verifier = this.store.read().codeVerifier;
    if (verifier === undefined) throw authRequired(this.child, "no sign-in is under way");
    return verifier;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "all") return this.store.forget();
    const key = ({ client: "client", tokens: "tokens", verifier: "codeVerifier", discovery: "discovery" } as const)[scope];
    this.store.update(({ [key]: _dropped, ...rest }) => ({ ...rest, resource: rest.resource }));
  }

  /**
   * The client credentials grant asks for the configured scopes (`scope`, from the client metadata), else for
   * the scopes the child's protected-resource metadata lists.
   */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (!this.unattended) return undefined;
    const asked = scope || this.store.read().discovery?.resourceMetadata?.scopes_supported?.join(" ");
    return new URLSearchParams({ grant_type: "client_credentials", ...(asked && { scope: asked }) });
  }

  /**
   * A child without an `oauth` table that answers 401 but publishes no OAuth metadata has nothing to sign in
   * to: its refusal is about the url or the headers, and is told so.
   */
  saveDiscoveryState(discovery: OAuthDiscoveryState): void {
    if (!discovery.resourceMetadata && !discovery.authorizationServerMetadata && this.config === undefined) {
      throw new Error(
        "the server answered 401 (Unauthorized) and publishes no OAuth metadata (RFC 9728, RFC 8414), so there is nothing to sign in to",
      );
    }
    this.store.update((stored) => ({ ...stored, discovery }));
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.store.read().discovery;
  }
}
