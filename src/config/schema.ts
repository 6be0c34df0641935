// Owns the config file's shape: zod schemas for the raw TOML/JSON document and its transform into GaggleConfig.
import { z } from "zod";
import { type RawChild, checkChild, childShape, normalizeChild } from "./child.js";
import { configPath, type PathOptions } from "./paths.js";
import { VIRTUAL_DEFAULTS, virtualSettingsSchema, withAbsolutePaths, type VirtualSettings } from "./virtual/index.js";
import { isObject } from "../shared/json.js";
import { closed, durationMs, expected, oneOf, onlySoftIssues } from "./zod-kit.js";

export const TRANSPORT_KINDS = ["stdio", "http", "sse"] as const;
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export const EXPOSE_MODES = ["meta", "tools", "both", "search"] as const;
/** Names of the built-in virtual children; no configured server may use them. */
export const VIRTUAL_CHILD_NAMES = ["process", "goose", "team", "duckdb", "imagen", "workspace"] as const;
/** Server names become part of namespaced tool names, so they stay plain. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** The names of gateway.auth_tokens: the principal each token stands for. */
const TOKEN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

// ---- normalized output: what the rest of gaggle reads ----

export type TransportKind = (typeof TRANSPORT_KINDS)[number];
export type ExposeMode = (typeof EXPOSE_MODES)[number];

/**
 * The protocol era gaggle speaks to a child: "auto" finds out (over HTTP server/discover first, on stdio
 * initialize first, then server/discover if the child refuses it), the others insist.
 */
export type ProtocolChoice = "auto" | "2025-11-25" | "2026-07-28";

export interface ChildConfig {
  name: string;
  transport: TransportKind;
  command?: string;
  args: string[];
  env: Record<string, string>;
  /** Absolute. */
  cwd: string;
  inheritEnv: boolean;
  url?: string;
  headers: Record<string, string>;
  enabled: boolean;
  startup: "lazy" | "eager";
  timeoutMs: number;
  maxTimeoutMs: number;
  startupTimeoutMs: number;
  /**
   * What the first start gets, before any start succeeded: longer for a command that fetches what it runs the
   * first time (npx and the like, see fetchesOnFirstRun) when startup_timeout_ms is not set; else startupTimeoutMs.
   */
  firstStartupTimeoutMs: number;
  protocol: ProtocolChoice;
  concurrency: number;
  /** 0 = never stop an idle child. */
  idleTimeoutMs: number;
  description?: string;
  /** Overrides gateway.expose for this child. */
  expose?: ExposeMode;
  /** Prefix of its exposed names (`<prefix>__<tool>`); defaults to the child's name, "" exposes names unchanged. */
  prefix?: string;
  /** Glob patterns; `allow` absent = every tool. */
  tools: { allow?: string[]; deny: string[] };
  /** How gaggle signs in to a remote child; without it, OAuth is used only when the child asks for it. */
  oauth?: OAuthConfig;
}

/** `[mcp_servers.NAME.oauth]`: the client gaggle is at the child's authorization server. */
export interface OAuthConfig {
  /** Pre-registered client; without it, a client metadata document URL, else dynamic registration. */
  clientId?: string;
  clientSecret?: string;
  /** Instead of a secret, the client proves itself with a JWT signed by this key (private_key_jwt, RFC 7523). */
  privateKey?: { pem: string; alg: string };
  /** An https URL where the authorization server can fetch gaggle's client metadata (its client_id). */
  clientMetadataUrl?: string;
  /** Asked for when the child names none (its WWW-Authenticate, then its scopes_supported, come first). */
  scopes: string[];
  grant: "authorization_code" | "client_credentials" | "enterprise";
  /** For `grant = "enterprise"`: the identity provider that turns the person's ID token into a grant (SEP-990). */
  enterprise?: EnterpriseConfig;
  /** The loopback port sign-in redirects to; 0 = any free port. */
  redirectPort: number;
}

/** The organisation's identity provider, for enterprise-managed authorization (SEP-990). */
export interface EnterpriseConfig {
  /** Its token endpoint, where the ID token is exchanged (RFC 8693). */
  idpTokenEndpoint: string;
  /** gaggle's client at the identity provider. */
  idpClientId: string;
  idpClientSecret?: string;
  /** The person's ID token from the identity provider (usually `${VAR}`). */
  idToken: string;
}

export interface GatewayConfig {
  logLevel: (typeof LOG_LEVELS)[number];
  expose: ExposeMode;
  /** How long a child gets after SIGTERM before SIGKILL. */
  shutdownGraceMs: number;
  /** Bearer token HTTP clients must send; required when serving HTTP on a non-loopback address (or authTokens). */
  authToken?: string;
  /**
   * Named bearer tokens, name -> token: each client is the principal its token names, a session is bound to the
   * token that opened it, and what a client starts belongs to its principal.
   */
  authTokens?: Record<string, string>;
  /** Extra Host header values (host or host:port) accepted over HTTP, besides loopback names. */
  allowedHosts: string[];
  /** Extra Origin header values accepted over HTTP, besides loopback origins. */
  allowedOrigins: string[];
  /** Largest HTTP request body accepted, in bytes. */
  maxBodyBytes: number;
  /**
   * What gaggle keeps queued for one client that is not reading, in bytes: past it, log and progress
   * notifications are dropped (and counted to the client), and the children serving it are not read.
   */
  maxClientQueueBytes: number;
  /** An HTTP session unused this long is closed and releases what it held. */
  sessionIdleTimeoutMs: number;
  /**
   * How long a proxy-mode list waits for children the catalog knows nothing of; those not there by then are
   * left out, and list_changed tells the client once they are.
   */
  listWaitMs: number;
  /** Where virtual children keep logs and state; absolute. Defaults to $XDG_STATE_HOME/gaggle/. */
  stateDir?: string;
}

/** A loaded config file, as the rest of gaggle reads it: defaults filled in, every path absolute. */
export interface GaggleConfig {
  /** Absolute path of the file this was loaded from. */
  path: string;
  gateway: GatewayConfig;
  /** In file order, disabled children included. */
  children: ChildConfig[];
  /** Settings of the built-in virtual children, defaults filled in. */
  virtual: VirtualSettings;
}

export const GATEWAY_DEFAULTS: GatewayConfig = {
  logLevel: "info",
  expose: "meta",
  shutdownGraceMs: 2000,
  allowedHosts: [],
  allowedOrigins: [],
  maxBodyBytes: 4 * 1024 * 1024,
  maxClientQueueBytes: 4 * 1024 * 1024,
  sessionIdleTimeoutMs: 30 * 60_000,
  // Well under the 5 s some clients give a first tools/list.
  listWaitMs: 2000,
};

// ---- raw input: the file as written ----

/** Why `name` cannot name a server, or undefined when it can. */
export function serverNameProblem(name: string): string | undefined {
  if ((VIRTUAL_CHILD_NAMES as readonly string[]).includes(name)) {
    return `the name ${JSON.stringify(name)} is reserved for a built-in virtual child; pick another name`;
  }
  if (!SERVER_NAME_PATTERN.test(name)) {
    return `invalid server name ${JSON.stringify(name)}: expected letters, digits, "_" or "-", starting with a letter or digit`;
  }
  return undefined;
}

const gatewaySchema = closed({
  log_level: oneOf(LOG_LEVELS).optional(),
  expose: oneOf(EXPOSE_MODES).optional(),
  shutdown_grace_ms: durationMs("an integer >= 0", { min: 0 }).optional(),
  auth_token: z.string(expected("a string")).min(1).optional(),
  auth_tokens: z
    .record(
      z.string(),
      z.string(expected('a token string (usually "${VAR}")')).min(1, "expected a non-empty token"),
      expected("a table of name = token"),
    )
    .optional(),
  allowed_hosts: z.array(z.string(expected("a string")), expected("an array of strings")).optional(),
  allowed_origins: z.array(z.string(expected("a string")), expected("an array of strings")).optional(),
  max_body_bytes: z.int(expected("a positive integer")).positive().optional(),
  max_client_queue_bytes: z.int(expected("a positive integer")).positive().optional(),
  session_idle_timeout_ms: durationMs("a positive integer", { min: 1 }).optional(),
  list_wait_ms: durationMs("an integer >= 0", { min: 0, max: 600_000 }).optional(),
  state_dir: z.string(expected("a directory path")).min(1).optional(),
})
  .superRefine((raw, ctx) => {
    // One token, one principal: a token given twice would make its holder whichever name came first.
    const seen = new Map<string, string>(raw.auth_token === undefined ? [] : [[raw.auth_token, "auth_token"]]);
    for (const [name, token] of Object.entries(raw.auth_tokens ?? {})) {
      if (!TOKEN_NAME_PATTERN.test(name)) {
        const message = `invalid token name ${JSON.stringify(name)}: expected letters, digits, "_", "-" or ".", starting with a letter or digit`;
        ctx.addIssue({ code: "custom", path: ["auth_tokens", name], message, input: name });
      }
      const other = seen.get(token);
      if (other !== undefined) {
        const message = `the same token as ${other === "auth_token" ? "auth_token" : `auth_tokens.${other}`}: give each name its own token`;
        ctx.addIssue({ code: "custom", path: ["auth_tokens", name], message, input: undefined });
      }
      seen.set(token, name);
    }
  })
  .transform((raw): GatewayConfig => ({
    logLevel: raw.log_level ?? GATEWAY_DEFAULTS.logLevel,
    expose: raw.expose ?? GATEWAY_DEFAULTS.expose,
    shutdownGraceMs: raw.shutdown_grace_ms ?? GATEWAY_DEFAULTS.shutdownGraceMs,
    ...(raw.auth_token !== undefined && { authToken: raw.auth_token }),
    ...(raw.auth_tokens !== undefined && { authTokens: raw.auth_tokens }),
    allowedHosts: raw.allowed_hosts ?? GATEWAY_DEFAULTS.allowedHosts,
    allowedOrigins: raw.allowed_origins ?? GATEWAY_DEFAULTS.allowedOrigins,
    maxBodyBytes: raw.max_body_bytes ?? GATEWAY_DEFAULTS.maxBodyBytes,
    maxClientQueueBytes: raw.max_client_queue_bytes ?? GATEWAY_DEFAULTS.maxClientQueueBytes,
    sessionIdleTimeoutMs: raw.session_idle_timeout_ms ?? GATEWAY_DEFAULTS.sessionIdleTimeoutMs,
    listWaitMs: raw.list_wait_ms ?? GATEWAY_DEFAULTS.listWaitMs,
    ...(raw.state_dir !== undefined && { stateDir: raw.state_dir }),
  }));

/**
 * The schema of a whole config file. Every path in it comes out absolute, read as config/paths.ts says
 * (relative ones from the folder of `opts.path`), so the schema is built per file.
 */
export function configFileSchema(opts: PathOptions) {
  const tableChild = closed(childShape, { name: "a server's name is its key in the servers table, so remove it" })
    .superRefine(checkChild, onlySoftIssues)
    .transform((raw: RawChild) => normalizeChild(raw, opts));
  const listChild = closed({ name: z.string(expected("a server name")), ...childShape })
    .superRefine(checkChild, onlySoftIssues)
    .transform((raw): ChildConfig => ({ ...normalizeChild(raw, opts), name: raw.name }));

  const serverTable = z
    .record(z.string(), tableChild)
    .superRefine(
      (table: unknown, ctx) => {
        for (const name of isObject(table) ? Object.keys(table) : []) {
          const problem = serverNameProblem(name);
          if (problem) ctx.addIssue({ code: "custom", path: [name], message: problem, input: name, continue: true });
        }
      },
      { when: (payload) => isObject(payload.value) },
    )
    .transform((table) => Object.entries(table).map(([name, child]): ChildConfig => ({ name, ...child })));

  const serverList = z.array(listChild).superRefine(
    (list: unknown, ctx) => {
      const firstIndex = new Map<string, number>();
      (Array.isArray(list) ? list : []).forEach((entry: unknown, index) => {
        const name = isObject(entry) ? entry["name"] : undefined;
        if (typeof name !== "string") return;
        const path = [index, "name"];
        const problem = serverNameProblem(name);
        if (problem) ctx.addIssue({ code: "custom", path, message: problem, input: name, continue: true });
        const first = firstIndex.get(name);
        if (first === undefined) firstIndex.set(name, index);
        else {
          const message = `duplicate server name ${JSON.stringify(name)} (first used by entry [${first}])`;
          ctx.addIssue({ code: "custom", path, message, input: name, continue: true });
        }
      });
    },
    { when: (payload) => Array.isArray(payload.value) },
  );

  const servers = z.union([serverTable, serverList], expected("a table of servers ([mcp_servers.NAME]) or an array of [[mcp_servers]] entries"));

  return closed({
    mcp_servers: servers.optional(),
    mcpServers: servers.optional(),
    gateway: gatewaySchema.optional(),
    virtual: virtualSettingsSchema.optional(),
  })
    .superRefine(
      (doc: unknown, ctx) => {
        if (isObject(doc) && doc["mcp_servers"] !== undefined && doc["mcpServers"] !== undefined) {
          const message = `cannot be combined with "mcp_servers" (the same table under its TOML and JSON names); keep one`;
          ctx.addIssue({ code: "custom", path: ["mcpServers"], message, input: doc["mcpServers"], continue: true });
        }
      },
      { when: (payload) => isObject(payload.value) },
    )
    .transform((doc): GaggleConfig => {
      const gateway = doc.gateway ?? GATEWAY_DEFAULTS;
      return {
        path: opts.path,
        gateway: gateway.stateDir === undefined ? gateway : { ...gateway, stateDir: configPath(gateway.stateDir, opts) },
        children: doc.mcp_servers ?? doc.mcpServers ?? [],
        virtual: withAbsolutePaths(doc.virtual ?? VIRTUAL_DEFAULTS, opts),
      };
    })
    .superRefine(checkPrefixes);
}

/** Two children exposing tools under one non-empty prefix would collide name for name: a config error naming both. */
function checkPrefixes(config: GaggleConfig, ctx: z.RefinementCtx): void {
  const owners = new Map<string, string>();
  for (const child of config.children) {
    const mode = child.expose ?? config.gateway.expose;
    if (!child.enabled || mode === "meta" || mode === "search") continue;
    const prefix = child.prefix ?? child.name;
    if (prefix === "") continue;
    const first = owners.get(prefix);
    if (first === undefined) owners.set(prefix, child.name);
    else {
      const message = `exposed tool names of "${child.name}" collide with those of "${first}": both use the prefix ${JSON.stringify(prefix)}; give one of them another "prefix"`;
      ctx.addIssue({ code: "custom", path: ["mcp_servers", child.name, "prefix"], message, input: prefix });
    }
  }
}
