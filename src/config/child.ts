// Owns one server entry: its raw keys, the rules across keys (transport, enabled/disabled, timeouts) and its normalized form.
import { dirname } from "node:path";
import { z } from "zod";
import { describeValue } from "./errors.js";
import type { TransportKind } from "./schema.js";
import { isObject } from "../shared/json.js";
import { configCommand, configPath, type PathOptions } from "./paths.js";
import { MAX_TIMER_MS } from "../shared/timer-delay.js";
import { camelKeys, closed, durationMs, expected, oneOf } from "./zod-kit.js";

/** What timeout_ms is when not given; max_timeout_ms defaults to MAX_TIMEOUT_FACTOR times it. */
const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_TIMEOUT_FACTOR = 10;
/** What startup_timeout_ms is when not given, */
const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
/** but for a first `npx -y` start, which downloads the package and may compile it: minutes, not seconds. */
const FIRST_FETCH_STARTUP_TIMEOUT_MS = 180_000;

/** Commands that fetch what they run the first time (and may build it): a first start can take minutes. */
const FETCHING_RUNNERS = new Set(["npx", "pnpx", "bunx", "uvx", "pipx"]);

export function fetchesOnFirstRun(command: string): boolean {
  return FETCHING_RUNNERS.has(command.split("/").pop() ?? "");
}

/** Every spelling accepted for `type` / `transport`, and what it means. */
const TRANSPORT_NAMES = {
  stdio: "stdio",
  http: "http",
  sse: "sse",
  "streamable-http": "http",
  streamableHttp: "http",
  streamable_http: "http",
} as const satisfies Record<string, TransportKind>;

const text = (what = "a string") => z.string(expected(what));
const stringList = () => z.array(text(), expected("an array of strings"));
const stringMap = () => z.record(z.string(), text(), expected("a table of strings"));
const positiveMs = () => durationMs("a positive integer", { min: 1 });
const flag = () => z.boolean(expected("true or false"));
const transportName = () =>
  z.enum(
    ["stdio", "http", "sse", "streamable-http", "streamableHttp", "streamable_http"],
    expected(`one of "stdio", "http", "sse" ("streamable-http" also means "http")`),
  );

function isHttpUrl(value: string): boolean {
  return URL.canParse(value) && ["http:", "https:"].includes(new URL(value).protocol);
}

/**
 * The keys of one server entry, snake_case in both formats. A key whose default depends on others (the
 * transport, the time limits, cwd) or that the rules across keys must see as written has none here: its
 * default is filled in by normalizeChild.
 */
export const childShape = {
  command: text().optional(),
  args: stringList().default(() => []),
  env: stringMap().default(() => ({})),
  /** Absolute once loaded; the config file's folder by default. */
  cwd: text().optional(),
  inherit_env: flag().optional(),
  url: z.string(expected("an http(s) URL")).refine(isHttpUrl).optional(),
  headers: stringMap().default(() => ({})),
  type: transportName().optional(),
  transport: transportName().optional(),
  enabled: flag().optional(),
  disabled: flag().optional(),
  startup: oneOf(["lazy", "eager"]).default("lazy"),
  timeout_ms: positiveMs().optional(),
  max_timeout_ms: positiveMs().optional(),
  startup_timeout_ms: positiveMs().optional(),
  /**
   * The protocol era gaggle speaks to the child: "auto" finds out (over HTTP server/discover first, on stdio
   * initialize first, then server/discover if the child refuses it), the others insist.
   */
  protocol: oneOf(["auto", "2025-11-25", "2026-07-28"]).optional(),
  concurrency: z.int(expected("an integer >= 1")).min(1).default(1),
  /** 0 = never stop an idle child. */
  idle_timeout_ms: durationMs("an integer >= 0 (0 = never)", { min: 0, zeroIsNone: true }).default(0),
  description: text().optional(),
  /** Overrides gateway.expose for this child. */
  expose: oneOf(["meta", "tools", "both"]).optional(),
  /** Prefix of its exposed names (`<prefix>__<tool>`); defaults to the child's name, "" exposes names unchanged. */
  prefix: z
    .string(expected('letters, digits, "_" or "-" (or "" for no prefix)'))
    .regex(/^[A-Za-z0-9_-]*$/)
    .optional(),
  /** Glob patterns; `allow` absent = every tool. */
  tools: closed({ allow: stringList().optional(), deny: stringList().default(() => []) }).prefault({}),
  /** How gaggle signs in to a remote child, as a client of its authorization server; without it, OAuth is used only when the child asks for it. */
  oauth: closed({
    /** A pre-registered client; without it, a client metadata document URL, else dynamic registration. */
    client_id: text().optional(),
    client_secret: text().optional(),
    /** Instead of a secret, the client proves itself with a JWT signed by this key (private_key_jwt, RFC 7523). A key's text is never repeated in an error. */
    private_key: z
      .string({ error: "expected a PEM private key (PKCS#8), usually ${VAR}" })
      .refine((value) => value.includes("-----BEGIN PRIVATE KEY-----"), {
        error: 'expected a PEM private key in PKCS#8 form (it starts "-----BEGIN PRIVATE KEY-----"), got other text',
      })
      .optional(),
    signing_alg: oneOf(["ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"]).optional(),
    /** An https URL where the authorization server can fetch gaggle's client metadata (its client_id). */
    client_metadata_url: z
      .string(expected("an https URL"))
      .refine((value) => URL.canParse(value) && new URL(value).protocol === "https:")
      .optional(),
    /** Asked for when the child names none (its WWW-Authenticate, then its scopes_supported, come first). */
    scopes: stringList().default(() => []),
    grant: oneOf(["authorization_code", "client_credentials", "enterprise"]).default("authorization_code"),
    /** For the enterprise grant (SEP-990): the identity provider's token endpoint, where the ID token is exchanged (RFC 8693). */
    idp_token_endpoint: z
      .string(expected("an http(s) URL"))
      .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol))
      .optional(),
    /** gaggle's client at the identity provider. */
    idp_client_id: text().optional(),
    idp_client_secret: text().optional(),
    /** The person's ID token from the identity provider (usually `${VAR}`). */
    id_token: text().optional(),
    /** The loopback port sign-in redirects to; 0 = any free port. */
    redirect_port: z.int(expected("a port from 0 to 65535 (0 = any free port)")).min(0).max(65535).default(0),
  }).optional(),
};

export type RawChild = z.output<ReturnType<typeof closed<typeof childShape>>>;

const STDIO_ONLY = ["args", "env", "cwd", "inherit_env"] as const;
const HTTP_ONLY = ["headers", "oauth"] as const;

function declaredTransport(raw: RawChild): { kind: TransportKind; key: "type" | "transport" } | undefined {
  if (raw.type !== undefined) return { kind: TRANSPORT_NAMES[raw.type], key: "type" };
  if (raw.transport !== undefined) return { kind: TRANSPORT_NAMES[raw.transport], key: "transport" };
  return undefined;
}

/** `type`/`transport` if given, else stdio when there is a `command`, http when there is a `url`. */
function transportOf(raw: RawChild): TransportKind | undefined {
  const declared = declaredTransport(raw)?.kind;
  if (declared !== undefined) return declared;
  if (raw.command !== undefined) return "stdio";
  return raw.url !== undefined ? "http" : undefined;
}

/** Set to something that would matter: empty `args = []` or `env = {}` count as absent. */
function isSet(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return value !== undefined;
}

/** The rules that involve more than one key. Runs only on an entry whose values are all well typed. */
export function checkChild(raw: RawChild, ctx: z.RefinementCtx): void {
  const issue = (path: PropertyKey[], message: string, input?: unknown): void =>
    ctx.addIssue({ code: "custom", path, message, input, continue: true });

  const { type, transport: alsoType } = raw;
  if (type !== undefined && alsoType !== undefined && TRANSPORT_NAMES[type] !== TRANSPORT_NAMES[alsoType]) {
    const found = describeValue(alsoType);
    issue(["transport"], `expected the same transport as "type" (${JSON.stringify(type)}), got ${found}; keep only one of them`, alsoType);
  }
  const declared = declaredTransport(raw);
  const transport = transportOf(raw);
  if (transport === undefined) {
    issue([], `expected "command" (a stdio server) or "url" (an http or sse server), got neither`);
  } else if (transport === "stdio") {
    const why = declared ? `(set by "${declared.key}")` : `(inferred from "command")`;
    if (raw.command === undefined) issue(["command"], `expected a command for the stdio transport ${why}, got nothing`);
    if (raw.url !== undefined) {
      const fix = declared ? "remove it" : `remove it, or remove "command" to make this an http server`;
      issue(["url"], `not used by the stdio transport ${why}; ${fix}`, raw.url);
    }
    const message = `only used by the http and sse transports, but this server uses stdio ${why}; remove it`;
    for (const key of HTTP_ONLY) if (isSet(raw[key])) issue([key], message, raw[key]);
  } else {
    const why = declared ? `(set by "${declared.key}")` : `(inferred from "url")`;
    if (raw.url === undefined) issue(["url"], `expected an http(s) URL for the ${transport} transport ${why}, got nothing`);
    if (raw.command !== undefined) issue(["command"], `not used by the ${transport} transport ${why}; remove it`, raw.command);
    const message = `only used by the stdio transport, but this server uses ${transport} ${why}; remove it`;
    for (const key of STDIO_ONLY) if (isSet(raw[key])) issue([key], message, raw[key]);
  }
  if (raw.oauth?.grant === "client_credentials" && raw.oauth.client_id === undefined) {
    issue(["oauth", "client_id"], `expected a client_id for the client_credentials grant (with client_secret or private_key), got nothing`);
  }
  if (raw.oauth?.grant === "enterprise") {
    for (const key of ["client_id", "idp_token_endpoint", "idp_client_id", "id_token"] as const) {
      if (raw.oauth[key] === undefined) issue(["oauth", key], `expected a value for the enterprise grant (SEP-990), got nothing`);
    }
  }
  if (raw.oauth?.private_key !== undefined && raw.oauth.client_secret !== undefined) {
    issue(["oauth", "private_key"], `cannot be combined with "client_secret": the client proves itself with one of them; keep one`);
  }
  if (raw.oauth?.signing_alg !== undefined && raw.oauth.private_key === undefined) {
    issue(["oauth", "signing_alg"], `only used with "private_key"; set private_key or remove it`, raw.oauth.signing_alg);
  }
  if (raw.enabled !== undefined && raw.disabled !== undefined) {
    issue(["disabled"], `cannot be combined with "enabled"; keep one of them`, raw.disabled);
  }
  const timeoutMs = raw.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  if (raw.max_timeout_ms !== undefined && raw.max_timeout_ms < timeoutMs) {
    const which = raw.timeout_ms === undefined ? `timeout_ms (${timeoutMs}, the default)` : `timeout_ms (${timeoutMs})`;
    issue(["max_timeout_ms"], `expected an integer >= ${which}, got number ${raw.max_timeout_ms}`, raw.max_timeout_ms);
  }
}

/**
 * The entry as gaggle reads it (without its name): keys in camelCase, every default filled in, paths absolute.
 * Assumes checkChild found nothing.
 */
export function normalizeChild(raw: RawChild, opts: PathOptions) {
  // Read here: the keys whose defaults depend on others, and those that become other keys.
  const { type: _type, transport: _transport, enabled, disabled, command, cwd, inherit_env, oauth, tools, ...plain } = raw;
  const { timeout_ms: _timeout, max_timeout_ms, startup_timeout_ms, protocol, ...rest } = plain;
  const transport = transportOf(raw) ?? "stdio";
  const timeoutMs = raw.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  return {
    ...camelKeys(rest),
    transport,
    ...(command !== undefined && { command: configCommand(command, opts) }),
    cwd: cwd === undefined ? dirname(opts.path) : configPath(cwd, opts),
    /** The config file it is written in: a command a person is told to run for it names the file (see signInCommand). */
    configFile: opts.path,
    inheritEnv: inherit_env ?? true,
    enabled: enabled ?? (disabled === undefined ? true : !disabled),
    timeoutMs,
    // Within a timer's range like every duration given, so that none needs checking where it is used.
    maxTimeoutMs: max_timeout_ms ?? Math.min(MAX_TIMEOUT_FACTOR * timeoutMs, MAX_TIMER_MS),
    startupTimeoutMs: startup_timeout_ms ?? DEFAULT_STARTUP_TIMEOUT_MS,
    /**
     * What the first start gets, before any start succeeded: longer for a command that fetches what it runs the
     * first time (npx and the like, see fetchesOnFirstRun) when startup_timeout_ms is not set; else startupTimeoutMs.
     */
    firstStartupTimeoutMs:
      startup_timeout_ms ?? (command !== undefined && fetchesOnFirstRun(command) ? FIRST_FETCH_STARTUP_TIMEOUT_MS : DEFAULT_STARTUP_TIMEOUT_MS),
    // The legacy SSE transport is a 2025-era transport: there is nothing to ask.
    protocol: protocol ?? (transport === "sse" ? "2025-11-25" : "auto"),
    tools: camelKeys(tools),
    ...(oauth !== undefined && { oauth: normalizeOAuth(oauth) }),
  };
}

/** One server entry as the rest of gaggle reads it. */
export type ChildConfig = ReturnType<typeof normalizeChild> & { name: string };
export type ProtocolChoice = ChildConfig["protocol"];

/** `[mcp_servers.NAME.oauth]`: the client gaggle is at the child's authorization server. */
export type OAuthConfig = ReturnType<typeof normalizeOAuth>;
/** The organisation's identity provider, for enterprise-managed authorization (SEP-990). */
export type EnterpriseConfig = NonNullable<OAuthConfig["enterprise"]>;

function normalizeOAuth(raw: NonNullable<RawChild["oauth"]>) {
  const { private_key, signing_alg, idp_token_endpoint, idp_client_id, idp_client_secret, id_token, ...rest } = raw;
  return {
    ...camelKeys(rest),
    ...(private_key !== undefined && { privateKey: { pem: private_key, alg: signing_alg ?? "ES256" } }),
    ...(raw.grant === "enterprise" && {
      enterprise: {
        idpTokenEndpoint: idp_token_endpoint!,
        idpClientId: idp_client_id!,
        ...(idp_client_secret !== undefined && { idpClientSecret: idp_client_secret }),
        idToken: id_token!,
      },
    }),
  };
}
