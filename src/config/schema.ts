// Owns the config file's shape: zod schemas for the raw TOML/JSON document and its transform into GaggleConfig.
import { z } from "zod";
import {
  type ChildConfig,
  type EnterpriseConfig,
  type OAuthConfig,
  type ProtocolChoice,
  type RawChild,
  checkChild,
  childShape,
  normalizeChild,
} from "./child.js";
import { agentsSchema, type AgentConfig } from "./agents.js";
import { configPath, type PathOptions } from "./paths.js";
import { VIRTUAL_CHILD_NAMES, virtualSettingsSchema, type VirtualSettings } from "./virtual/index.js";
import { isObject } from "../shared/json.js";
import {
  adminAddressSchema,
  AUDIT_DEFAULTS,
  auditSchema,
  TELEMETRY_DEFAULTS,
  telemetrySchema,
  type AuditSettings,
  type TelemetrySettings,
} from "./observe.js";
import { camelKeys, closed, durationMs, expected, oneOf, onlySoftIssues } from "./zod-kit.js";

export const TRANSPORT_KINDS = ["stdio", "http", "sse"] as const;
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export const EXPOSE_MODES = ["meta", "tools", "both", "search"] as const;
/** Server names become part of namespaced tool names, so they stay plain. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** The names of gateway.auth_tokens: the principal each token stands for. */
const TOKEN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** Principals gaggle names itself: the stdio client (LOCAL_PRINCIPAL) and the holder of gateway.auth_token. */
const RESERVED_TOKEN_NAMES: Record<string, string> = {
  local: "the client on stdio (and every client of a listener without tokens)",
  auth_token: "the holder of gateway.auth_token or GAGGLE_AUTH_TOKEN",
};
/** Shorter tokens can be guessed by trying: a bearer token is the only thing between a listener and its children. */
export const MIN_TOKEN_CHARS = 16;

// ---- what the rest of gaggle reads: the schemas' output ----

export type TransportKind = (typeof TRANSPORT_KINDS)[number];
export type ExposeMode = (typeof EXPOSE_MODES)[number];
export type { AgentConfig, ChildConfig, EnterpriseConfig, OAuthConfig, ProtocolChoice };
export { VIRTUAL_CHILD_NAMES };
export type GatewayConfig = z.output<typeof gatewaySchema>;

/** A loaded config file, as the rest of gaggle reads it: defaults filled in, every path absolute. */
export interface GaggleConfig {
  /** Absolute path of the file this was loaded from. */
  path: string;
  gateway: GatewayConfig;
  /** In file order, disabled children included. */
  children: ChildConfig[];
  /** Settings of the built-in children, defaults filled in. */
  virtual: VirtualSettings;
  /** `[agents.NAME]`: the ACP agents the `agents` child drives, in file order. */
  agents: AgentConfig[];
  /** OpenTelemetry traces; the audit log's path is absolute. */
  telemetry: TelemetrySettings;
  audit: AuditSettings;
}

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

/** A token's text is never repeated in the message. */
function longEnough(payload: z.core.ParsePayload<string>): void {
  if (payload.value.length === 0 || payload.value.length >= MIN_TOKEN_CHARS) return;
  payload.issues.push({
    code: "custom",
    input: undefined,
    message: `a token of ${payload.value.length} characters is too short to keep anyone out: use at least ${MIN_TOKEN_CHARS} (e.g. \`openssl rand -hex 24\`)`,
  });
}

const gatewaySchema = closed({
  log_level: oneOf(LOG_LEVELS).default("info"),
  expose: oneOf(EXPOSE_MODES).default("meta"),
  /** How long a child gets after SIGTERM before SIGKILL. */
  shutdown_grace_ms: durationMs("an integer >= 0", { min: 0 }).default(2000),
  /** Bearer token HTTP clients must send; required when serving HTTP on a non-loopback address (or auth_tokens). */
  auth_token: z.string(expected("a string")).min(1).check(longEnough).optional(),
  /**
   * Named bearer tokens, name -> token: each client is the principal its token names, a session is bound to the
   * token that opened it, and what a client starts belongs to its principal.
   */
  auth_tokens: z
    .record(
      z.string(),
      z.string(expected('a token string (usually "${VAR}")')).min(1, "expected a non-empty token").check(longEnough),
      expected("a table of name = token"),
    )
    .optional(),
  /** Extra Host header values (host or host:port) accepted over HTTP, besides loopback names. */
  allowed_hosts: z.array(z.string(expected("a string")), expected("an array of strings")).default(() => []),
  /** Extra Origin header values accepted over HTTP, besides loopback origins. */
  allowed_origins: z.array(z.string(expected("a string")), expected("an array of strings")).default(() => []),
  /** Largest HTTP request body accepted, in bytes. */
  max_body_bytes: z
    .int(expected("a positive integer"))
    .positive()
    .default(4 * 1024 * 1024),
  /**
   * What gaggle keeps queued for one client that is not reading, in bytes: past it, log and progress
   * notifications are dropped (and counted to the client), and the children serving it are not read.
   */
  max_client_queue_bytes: z
    .int(expected("a positive integer"))
    .positive()
    .default(4 * 1024 * 1024),
  /**
   * HTTP connections open at once, authenticated or not; past it new ones are closed as they come, so that
   * connections cannot take the descriptors the children, shells and files need.
   */
  max_connections: z.int(expected("an integer >= 1")).min(1).default(1024),
  /** HTTP connections one token's clients may hold at once; past it a request is answered 503 and its connection closed. */
  max_connections_per_principal: z.int(expected("an integer >= 1")).min(1).default(256),
  /** HTTP sessions open at once; past it an initialize is answered 503. */
  max_sessions: z.int(expected("an integer >= 1")).min(1).default(1000),
  /** HTTP sessions one token may hold open; past it its initialize is answered 503. */
  max_sessions_per_principal: z.int(expected("an integer >= 1")).min(1).default(100),
  /** How long a connection gets to send a request's headers; past it the connection is closed (slow or half-open clients). */
  headers_timeout_ms: durationMs("an integer from 1000 to 600000", { min: 1, max: 600_000 }).min(1000).default(10_000),
  /** How long a connection gets to send a whole request, body included; past it the connection is closed. */
  request_timeout_ms: durationMs("an integer from 1000 to 3600000", { min: 1, max: 3_600_000 }).min(1000).default(60_000),
  /** An HTTP session unused this long is closed and releases what it held. */
  session_idle_timeout_ms: durationMs("a positive integer", { min: 1 }).default(30 * 60_000),
  /**
   * How long a proxy-mode list waits for children the catalog knows nothing of; those not there by then are
   * left out, and list_changed tells the client once they are. Short: Claude Code asks for its lists as it connects
   * and sends its first request to the model with the tools listed by then, not waiting for the rest.
   */
  list_wait_ms: durationMs("an integer >= 0", { min: 0, max: 600_000 }).default(500),
  /**
   * Longer waits for the tools/list of clients that list once and never again (they ignore list_changed), by the
   * name they give in initialize: a child that came later would be missing from their whole session. Codex (0.171)
   * waits 10 s for a server's start.
   */
  list_wait_ms_by_client: z
    .record(z.string(), durationMs("an integer >= 0", { min: 0, max: 600_000 }), expected("a table of client names and milliseconds"))
    .default(() => ({ "codex-mcp-client": 8000 })),
  /** Where built-in children keep logs and state, and gaggle its catalog and tokens; absolute once loaded. Defaults to $XDG_STATE_HOME/gaggle/. */
  state_dir: z.string(expected("a directory path")).min(1).optional(),
  /**
   * Whether `gaggle` over stdio relays to the one gaggle (the daemon) every client of this config shares; false:
   * each client's gaggle runs its own children, as --standalone.
   */
  shared: z.boolean(expected("true or false")).default(true),
  /** The daemon stops once it has had no client and no background work this long. */
  daemon_idle_ms: durationMs("a positive integer", { min: 1 }).default(30 * 60_000),
  /**
   * Who sees the work a client started (background processes, goslings, teams): "own", only the principal that
   * started it; "all", every principal (for one person using several tokens). Only the owner stops or prompts it either way.
   */
  visibility: oneOf(["own", "all"]).default("own"),
  /** Where the admin listener (status page, metrics, health) binds; false: nowhere; absent: the serving mode's default. */
  admin: adminAddressSchema.optional(),
})
  .superRefine((raw, ctx) => {
    // One token, one principal: a token given twice would make its holder whichever name came first.
    const seen = new Map<string, string>(raw.auth_token === undefined ? [] : [[raw.auth_token, "auth_token"]]);
    for (const [name, token] of Object.entries(raw.auth_tokens ?? {})) {
      if (!TOKEN_NAME_PATTERN.test(name)) {
        const message = `invalid token name ${JSON.stringify(name)}: expected letters, digits, "_", "-" or ".", starting with a letter or digit`;
        ctx.addIssue({ code: "custom", path: ["auth_tokens", name], message, input: name });
      }
      const reserved = Object.hasOwn(RESERVED_TOKEN_NAMES, name) ? RESERVED_TOKEN_NAMES[name] : undefined;
      if (reserved !== undefined) {
        const message = `the token name ${JSON.stringify(name)} is gaggle's own principal (${reserved}): pick another name`;
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
  .transform(camelKeys);

/** `[gateway]` when the file has none. */
export const GATEWAY_DEFAULTS: GatewayConfig = gatewaySchema.parse({});

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
    virtual: virtualSettingsSchema(opts).prefault({}),
    agents: agentsSchema(opts).optional(),
    telemetry: telemetrySchema.optional(),
    audit: auditSchema.optional(),
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
        virtual: doc.virtual,
        agents: doc.agents ?? [],
        telemetry: doc.telemetry ?? TELEMETRY_DEFAULTS,
        audit: withAuditPath(doc.audit ?? AUDIT_DEFAULTS, opts),
      };
    })
    .superRefine(checkPrefixes);
}

function withAuditPath(audit: AuditSettings, opts: PathOptions): AuditSettings {
  return audit.path === undefined ? audit : { ...audit, path: configPath(audit.path, opts) };
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
