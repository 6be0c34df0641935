// One sign-in to a remote child, from start to stored tokens: ask the child what it wants, send a person to its
// authorization page through `open`, wait at the loopback listener for the redirect, check it, exchange the code.
// `gaggle auth login` runs it from a shell; the gateway runs it when its client can open a URL for the person.
import { randomUUID } from "node:crypto";
import { auth, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import type { ChildConfig } from "../../config/index.js";
import { META, MODERN_VERSION } from "../../shared/modern-protocol.js";
import { expectedIssuer, issRefusal, type ExpectedIssuer } from "./issuer.js";
import { ChildOAuthProvider } from "./provider.js";
import { reaching } from "./reaching.js";
import { listenForRedirect } from "./redirect-listener.js";
import { unionOfScopes } from "./scopes.js";
import type { TokenStore } from "./token-store.js";

/** How long a sign-in waits for the person to come back from the authorization page. */
export const SIGN_IN_WAIT_MS = 5 * 60_000;

export interface SignInOptions {
  /** Shows the person the authorization URL. */
  open(url: URL): void | Promise<void>;
  /** Told once the person has been sent off, while the flow waits for the redirect. */
  waiting?(waitMs: number): void;
  /**
   * Given, once the redirect listener is up, what takes a redirect URL pasted by the person whose browser runs
   * on another machine (see RedirectListener.accept).
   */
  pasted?(accept: (redirect: string) => string | undefined): void;
  waitMs: number;
  /** Gives up the wait (the call that wanted the sign-in was cancelled). */
  signal?: AbortSignal;
}

export interface SignedIn {
  /** As the token endpoint answered. */
  scope?: string;
  expiresIn?: number;
}

export async function signIn(child: ChildConfig, store: TokenStore, options: SignInOptions): Promise<SignedIn> {
  const state = randomUUID();
  // The authorization server the sign-in is sent to, as discovered before the person is shown its page: a redirect
  // that carries the sign-in's state comes after that.
  let sentTo: ExpectedIssuer | undefined;
  const check = (params: URLSearchParams) => issRefusal(params.get("iss"), sentTo);
  const open = async (url: URL) => {
    sentTo = expectedIssuer((await store.read()).discovery);
    await options.open(url);
  };
  const listener = await listenForRedirect({
    port: child.oauth?.redirectPort ?? 0,
    state,
    waitMs: options.waitMs,
    check,
    ...(options.signal && { signal: options.signal }),
  });
  options.pasted?.((redirect) => listener.accept(redirect));
  try {
    const provider = new ChildOAuthProvider(child, child.oauth, store, { redirectUrl: listener.redirectUrl, state, open });
    const asked = await whatTheChildAsks(child);
    // What the child asks for now, with what a call found missing (step-up: both are kept, SEP-2350).
    const scope = unionOfScopes(asked.scope, (await store.read()).scopeWanted);
    const request = {
      serverUrl: child.url!,
      fetchFn: reaching(),
      ...(asked.resourceMetadataUrl && { resourceMetadataUrl: asked.resourceMetadataUrl }),
      ...(scope && { scope }),
    };
    let result = await withDiscoveryNamed(store, () => auth(provider, request));
    if (result === "REDIRECT") {
      options.waiting?.(options.waitMs);
      const authorizationCode = await listener.code;
      result = await withDiscoveryNamed(store, () => auth(provider, { ...request, authorizationCode }));
    }
    if (result !== "AUTHORIZED") throw new Error("the authorization server sent the sign-in back to its page again instead of issuing tokens");
    const { tokens } = await store.update(({ scopeWanted: _met, ...stored }) => ({ ...stored, ...(scope && { scopeAsked: scope }) }));
    return { ...(tokens?.scope && { scope: tokens.scope }), ...(tokens?.expires_in !== undefined && { expiresIn: tokens.expires_in }) };
  } finally {
    listener.close();
  }
}

/**
 * A step that failed after the authorization server was found to publish no metadata went to the endpoints
 * guessed for such a server (2025-03-26); its error says so, since the missing metadata is the likelier cause.
 */
async function withDiscoveryNamed<T>(store: TokenStore, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const { discovery } = await store.read();
    if (!discovery || discovery.authorizationServerMetadata || !(error instanceof Error)) throw error;
    error.message =
      `${discovery.authorizationServerUrl} publishes no authorization server metadata (RFC 8414 or OpenID Connect ` +
      `discovery, under /.well-known/), so gaggle used the endpoints such a server has by default, and: ${error.message}`;
    throw error;
  }
}

/**
 * What the child's 401 names: its protected-resource metadata and the scope it wants. A child may let
 * `initialize` through and gate everything else, so a request of each era is tried too; the first 401 speaks.
 */
async function whatTheChildAsks(child: ChildConfig): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  const clientInfo = { name: "gaggle", version: "0" };
  const probes = [
    { method: "initialize", params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo } },
    { method: "tools/list", params: {} },
    {
      method: "tools/list",
      params: { _meta: { [META.protocolVersion]: MODERN_VERSION, [META.clientCapabilities]: {}, [META.clientInfo]: clientInfo } },
      headers: { "mcp-protocol-version": MODERN_VERSION, "mcp-method": "tools/list" },
    },
  ];
  for (const { method, params, headers } of probes) {
    const response = await fetch(child.url!, {
      method: "POST",
      headers: { ...child.headers, ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method, params }),
    }).catch(() => undefined);
    if (response === undefined) return {};
    await response.body?.cancel();
    if (response.status !== 401) continue;
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
    return { ...(resourceMetadataUrl && { resourceMetadataUrl }), ...(scope && { scope }) };
  }
  return {};
}
