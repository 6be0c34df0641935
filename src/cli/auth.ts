// `gaggle auth login | status | logout`: signing in to remote children that require OAuth, from a shell.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { revokeTokens } from "../children/oauth/revoke.js";
import { signIn, SIGN_IN_WAIT_MS } from "../children/oauth/sign-in.js";
import { TokenStore } from "../children/oauth/token-store.js";
import { stateDir, type ChildConfig, type GaggleConfig } from "../config/index.js";
import { UsageError } from "./one-shot.js";

export async function runAuth(operands: string[], config: GaggleConfig): Promise<number> {
  const [action, name] = operands;
  if (action === "status") return status(config);
  if ((action !== "login" && action !== "logout") || name === undefined)
    throw new UsageError("usage: gaggle auth login NAME | auth status | auth logout NAME");
  const child = remoteChild(config, name);
  const store = new TokenStore(stateDir(config), child.name, child.url!);
  if (action === "logout") {
    const revoked = await revokeTokens(await store.read(), child.oauth);
    await store.forget();
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

/**
 * Signs in as a person at a shell: the authorization URL is printed (and opened), the result said in one line.
 * The redirect comes back to the loopback listener when the browser runs here; when it runs on another machine
 * (SSH, a container), the person pastes the address it ended on, read from stdin.
 */
async function login(child: ChildConfig, store: TokenStore): Promise<number> {
  const open = (url: URL) => {
    process.stdout.write(`Open this URL to sign in to ${child.name}:\n  ${url.href}\n`);
    openBrowser(url);
  };
  const waiting = (waitMs: number) =>
    process.stdout.write(
      `Waiting for the sign-in to finish (at most ${waitMs / 60_000} minutes)...\n` +
        "If the browser runs on another machine, paste here the address it ends on (http://127.0.0.1:.../callback?...), then Enter.\n",
    );
  const lines = createInterface({ input: process.stdin, terminal: false });
  const pasted = (accept: (redirect: string) => string | undefined) =>
    lines.on("line", (line) => {
      if (line.trim() === "") return;
      const ignored = accept(line);
      if (ignored) process.stdout.write(`That address was not taken: ${ignored}. Paste the address the browser ended on.\n`);
    });
  let signedIn: Awaited<ReturnType<typeof signIn>>;
  try {
    signedIn = await signIn(child, store, { open, waiting, pasted, waitMs: SIGN_IN_WAIT_MS });
  } catch (error) {
    process.stderr.write(`gaggle: signing in to ${child.name} failed: ${whyItFailed(error)}\n`);
    return 1;
  } finally {
    lines.close();
  }
  const { scope, expiresIn } = signedIn;
  const scopes = scope ? `; scopes granted: ${scope}` : "";
  const expiry = expiresIn !== undefined ? `; the access token expires in ${expiresIn} s (refreshed as needed)` : "";
  process.stdout.write(`${child.name}: signed in${scopes}${expiry}\n`);
  return 0;
}

/** An OAuth error as its server worded it, with its code (RFC 6749 section 5.2); any other error's message. */
function whyItFailed(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { errorCode?: unknown }).errorCode;
  return typeof code === "string" ? `${error.message} (the authorization server's error: ${code})` : error.message;
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
async function status(config: GaggleConfig): Promise<number> {
  const remote = config.children.filter((child) => child.transport !== "stdio");
  if (remote.length === 0) process.stdout.write("no child server is reached over http or sse\n");
  for (const child of remote) {
    const { tokens } = await new TokenStore(stateDir(config), child.name, child.url!).read();
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
