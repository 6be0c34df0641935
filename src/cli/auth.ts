// `gaggle auth login | status | logout`: signing in to remote children that require OAuth, from a shell.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { auth, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { ChildOAuthProvider } from "../children/oauth/provider.js";
import { revokeTokens } from "../children/oauth/revoke.js";
import { TokenStore } from "../children/oauth/token-store.js";
import { stateDir, type ChildConfig, type GaggleConfig } from "../config/index.js";
import { UsageError } from "./one-shot.js";

/** How long `gaggle auth login` waits for the browser to come back. */
const SIGN_IN_WAIT_MS = 5 * 60_000;

export async function runAuth(operands: string[], config: GaggleConfig): Promise<number> {
  const [action, name] = operands;
  if (action === "status") return status(config);
  if ((action !== "login" && action !== "logout") || name === undefined)
    throw new UsageError("usage: gaggle auth login NAME | auth status | auth logout NAME");
  const child = remoteChild(config, name);
  const store = new TokenStore(stateDir(config), child.name, child.url!);
  if (action === "logout") {
    const revoked = await revokeTokens(store.read(), child.oauth);
    store.forget();
    process.stdout.write(`${child.name}: signed out; ${revoked}; its tokens and client registration are forgotten\n`);
    return 0;
  }
  return login(child, store);
}

function remoteChild(config: GaggleConfig, name: string): ChildConfig {
  const child = config.children.find((candidate) => candidate.name === name);
  if (!child) throw new UsageError(`no child server named "${name}"; gaggle list shows them`);
  if (child.transport === "stdio") throw new UsageError(`${name} is a stdio server; sign-in is for servers reached over http or sse`);
  return child;
}

/** Signs in: asks the child what it needs, sends the user to its authorization page, waits for the redirect. */
async function login(child: ChildConfig, store: TokenStore): Promise<number> {
  const state = randomUUID();
  const callback = await listenForRedirect(child.oauth?.redirectPort ?? 0, state);
  try {
    const redirectUrl = `http://127.0.0.1:${callback.port}/callback`;
    const open = (url: URL) => {
      process.stdout.write(`Open this URL to sign in to ${child.name}:\n  ${url.href}\n`);
      openBrowser(url);
    };
    const provider = new ChildOAuthProvider(child.name, child.oauth, store, { redirectUrl, state, open });
    const asked = await whatTheChildAsks(child);
    const serverUrl = child.url!;
    let result = await auth(provider, { serverUrl, ...asked });
    if (result === "REDIRECT") {
      process.stdout.write(`Waiting for the sign-in to finish (at most ${SIGN_IN_WAIT_MS / 60_000} minutes)...\n`);
      result = await auth(provider, { serverUrl, ...asked, authorizationCode: await callback.code });
    }
    const tokens = store.read().tokens;
    const scopes = tokens?.scope ? `; scopes granted: ${tokens.scope}` : "";
    const expiry = tokens?.expires_in !== undefined ? `; the access token expires in ${tokens.expires_in} s (refreshed as needed)` : "";
    process.stdout.write(`${child.name}: signed in${scopes}${expiry}\n`);
    return result === "AUTHORIZED" ? 0 : 1;
  } finally {
    callback.close();
  }
}

/** What the child's 401 names: its protected-resource metadata and the scope it wants. */
async function whatTheChildAsks(child: ChildConfig): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  const probe = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "gaggle", version: "0" } },
  };
  const response = await fetch(child.url!, {
    method: "POST",
    headers: { ...child.headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(probe),
  }).catch(() => undefined);
  if (response?.status !== 401) {
    await response?.body?.cancel();
    return {};
  }
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
  await response.body?.cancel();
  return { ...(resourceMetadataUrl && { resourceMetadataUrl }), ...(scope && { scope }) };
}

/**
 * A loopback listener for the one redirect of a sign-in: `code` resolves with the authorization code of the
 * first redirect that carries the expected state; one with another state is refused and the wait goes on.
 */
async function listenForRedirect(port: number, state: string): Promise<{ port: number; code: Promise<string>; close(): void }> {
  let settle!: { resolve: (code: string) => void; reject: (error: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") return void response.writeHead(404).end("gaggle sign-in: nothing here\n");
    if (url.searchParams.get("state") !== state) {
      return void response.writeHead(400).end("gaggle sign-in: this redirect does not carry the state of the sign-in under way; ignored\n");
    }
    const error = url.searchParams.get("error");
    const given = url.searchParams.get("code");
    response.writeHead(error || !given ? 400 : 200, { "content-type": "text/plain" });
    response.end(error || !given ? `gaggle sign-in failed: ${error ?? "no code"}\n` : "gaggle: signed in; you can close this tab.\n");
    if (error || !given)
      settle.reject(
        new Error(`the authorization server refused the sign-in: ${error ?? "no code"} ${url.searchParams.get("error_description") ?? ""}`),
      );
    else settle.resolve(given);
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));
  const timer = setTimeout(() => settle.reject(new Error(`no sign-in came back within ${SIGN_IN_WAIT_MS / 60_000} minutes`)), SIGN_IN_WAIT_MS);
  return {
    port: (server.address() as AddressInfo).port,
    code,
    close: () => {
      clearTimeout(timer);
      server.close();
      server.closeAllConnections();
    },
  };
}

/** Opens the URL in a browser when a person is at a desktop; the printed URL is enough otherwise. */
function openBrowser(url: URL): void {
  if (!process.stdout.isTTY || process.env.CI) return;
  const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  if (process.platform === "linux" && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return;
  spawn(opener, [url.href], { stdio: "ignore", detached: true })
    .on("error", () => {})
    .unref();
}

/** One line per remote child: signed in or not, until when, with which scopes. */
function status(config: GaggleConfig): number {
  const remote = config.children.filter((child) => child.transport !== "stdio");
  if (remote.length === 0) process.stdout.write("no child server is reached over http or sse\n");
  for (const child of remote) {
    const { tokens } = new TokenStore(stateDir(config), child.name, child.url!).read();
    const expiresAt = tokens?.expires_in !== undefined ? tokens.saved_at + tokens.expires_in * 1000 : undefined;
    const state = !tokens
      ? "not signed in"
      : expiresAt === undefined
        ? "signed in"
        : expiresAt > Date.now()
          ? `signed in until ${new Date(expiresAt).toISOString()}`
          : `access token expired ${new Date(expiresAt).toISOString()}${tokens.refresh_token ? " (refreshed on next use)" : ""}`;
    process.stdout.write(`${child.name}: ${state}${tokens?.scope ? `; scopes: ${tokens.scope}` : ""}\n`);
  }
  return 0;
}
