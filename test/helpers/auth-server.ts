// A real OAuth 2.1 / OpenID authorization server (oidc-provider) on loopback, in the test's own process: dynamic
// client registration, PKCE, resource indicators with JWT access tokens, refresh tokens, revocation and the client
// credentials grant. The person at the browser is played by `browse`, who signs in as "alice" and consents to
// whatever is asked.
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type ClientMetadata } from "oidc-provider";
import { CLI } from "./paths.js";

export interface AuthServer {
  issuer: string;
  provider: Provider;
  close(): Promise<void>;
}

/**
 * `clients` are registered up front (for the client credentials grant); others register dynamically. Each request
 * to the token endpoint waits for `beforeToken` before the server reads it (a test's gate).
 */
export async function startAuthServer(options: { clients?: ClientMetadata[]; beforeToken?: () => Promise<void> } = {}): Promise<AuthServer> {
  const scopes = ["mcp:read", "mcp:write"];
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: options.clients ?? [],
    scopes: ["openid", "offline_access", ...scopes],
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: scopes.join(" "),
          audience: resource,
          accessTokenFormat: "jwt",
          accessTokenTTL: 3600,
        }),
      },
    },
    issueRefreshToken: () => true,
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
  });
  const callback = provider.callback();
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "POST" && req.url === "/token" && options.beforeToken) {
      return void options.beforeToken().then(() => callback(req, res));
    }
    if (!req.url?.startsWith("/interaction/")) return void callback(req, res);
    finishInteraction(provider, req, res).catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
  return {
    issuer,
    provider,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** alice signs in, and grants every scope asked for, for every resource named. */
async function finishInteraction(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === "login") {
    await provider.interactionFinished(req, res, { login: { accountId: "alice" } }, { mergeWithLastSubmission: false });
    return;
  }
  const { session, params, grantId, prompt } = details;
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
  const missing = prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
  if (missing.missingOIDCScope) grant!.addOIDCScope(missing.missingOIDCScope.join(" "));
  for (const [resource, asked] of Object.entries(missing.missingResourceScopes ?? {})) grant!.addResourceScope(resource, asked.join(" "));
  await provider.interactionFinished(req, res, { consent: { grantId: await grant!.save() } }, { mergeWithLastSubmission: true });
}

/**
 * The browser: follows redirects from `url` with the cookies the authorization server sets, and stops at the
 * first that leaves it (the redirect back to the client), which it visits, unless it runs on another machine
 * than the client (`elsewhere`: the address is all the person has). Returns that last response's status.
 */
export async function browse(url: string, issuer: string, options: { elsewhere?: boolean } = {}): Promise<{ status: number; landedAt: string }> {
  const cookies = new Map<string, string>();
  let next = url;
  for (let hop = 0; hop < 20; hop++) {
    const ours = next.startsWith(issuer);
    if (!ours && options.elsewhere) return { status: 0, landedAt: next };
    const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(next, { redirect: "manual", headers: ours && cookie ? { cookie } : {} });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1));
    }
    const location = response.headers.get("location");
    await response.body?.cancel();
    if (!ours || response.status < 300 || response.status >= 400 || !location) return { status: response.status, landedAt: next };
    next = new URL(location, next).href;
  }
  throw new Error(`the sign-in did not come back from ${issuer} within 20 redirects`);
}

/**
 * `gaggle auth login NAME` in a shell of its own (state under `state`), the person at the browser signing in once it
 * prints the page; resolves with its exit code.
 */
export async function loginInShell(config: string, name: string, state: string, issuer: string): Promise<number | null> {
  const login = spawn(process.execPath, [CLI, "auth", "login", name, "--config", config], {
    env: { ...process.env, XDG_STATE_HOME: state },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const exited = new Promise<number | null>((resolve) => login.once("close", resolve));
  let stdout = "";
  const page = await new Promise<string>((resolve, reject) => {
    login.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const match = /^\s+(http\S+)$/m.exec(stdout);
      if (match) resolve(match[1]!);
    });
    void exited.then(() => reject(new Error(`gaggle auth login ended before printing a page:\n${stdout}`)));
  });
  await browse(page, issuer);
  return exited;
}
