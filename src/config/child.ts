// Owns one server entry: its raw keys, the rules across keys (transport, enabled/disabled, timeouts) and its normalized form.
import { dirname } from "node:path";
import { z } from "zod";
import { describeValue } from "./errors.js";
import type { ChildConfig, OAuthConfig, TransportKind } from "./schema.js";
import { isObject } from "../shared/json.js";
import { configCommand, configPath, type PathOptions } from "./paths.js";
import { MAX_TIMER_MS } from "../shared/timer-delay.js";
import { closed, durationMs, expected, oneOf } from "./zod-kit.js";

export const CHILD_DEFAULTS = {
  timeoutMs: 60_000,
  /** max_timeout_ms defaults to this many times timeout_ms. */
  maxTimeoutFactor: 10,
  startupTimeoutMs: 30_000,
  /** A first `npx -y` start downloads the package and may compile it: minutes, not seconds. */
  firstFetchStartupTimeoutMs: 180_000,
  concurrency: 1,
  idleTimeoutMs: 0,
} as const;

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

/** Raw keys of one server entry, snake_case in both formats. */
export const childShape = {
  command: text().optional(),
  args: stringList().optional(),
  env: stringMap().optional(),
  cwd: text().optional(),
  inherit_env: flag().optional(),
  url: z.string(expected("an http(s) URL")).refine(isHttpUrl).optional(),
  headers: stringMap().optional(),
  type: transportName().optional(),
  transport: transportName().optional(),
  enabled: flag().optional(),
  disabled: flag().optional(),
  startup: oneOf(["lazy", "eager"]).optional(),
  timeout_ms: positiveMs().optional(),
  max_timeout_ms: positiveMs().optional(),
  startup_timeout_ms: positiveMs().optional(),
  protocol: oneOf(["auto", "2025-11-25", "2026-07-28"]).optional(),
  concurrency: z.int(expected("an integer >= 1")).min(1).optional(),
  idle_timeout_ms: durationMs("an integer >= 0 (0 = never)", { min: 0, zeroIsNone: true }).optional(),
  description: text().optional(),
  expose: oneOf(["meta", "tools", "both"]).optional(),
  prefix: z
    .string(expected('letters, digits, "_" or "-" (or "" for no prefix)'))
    .regex(/^[A-Za-z0-9_-]*$/)
    .optional(),
  tools: closed({ allow: stringList().optional(), deny: stringList().optional() }).optional(),
  oauth: closed({
    client_id: text().optional(),
    client_secret: text().optional(),
    // A key's text is never repeated in an error.
    private_key: z
      .string({ error: "expected a PEM private key (PKCS#8), usually ${VAR}" })
      .refine((value) => value.includes("-----BEGIN PRIVATE KEY-----"), {
        error: 'expected a PEM private key in PKCS#8 form (it starts "-----BEGIN PRIVATE KEY-----"), got other text',
      })
      .optional(),
    signing_alg: oneOf(["ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"]).optional(),
    client_metadata_url: z
      .string(expected("an https URL"))
      .refine((value) => URL.canParse(value) && new URL(value).protocol === "https:")
      .optional(),
    scopes: stringList().optional(),
    grant: oneOf(["authorization_code", "client_credentials", "enterprise"]).optional(),
    idp_token_endpoint: z
      .string(expected("an http(s) URL"))
      .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol))
      .optional(),
    idp_client_id: text().optional(),
    idp_client_secret: text().optional(),
    id_token: text().optional(),
    redirect_port: z.int(expected("a port from 0 to 65535 (0 = any free port)")).min(0).max(65535).optional(),
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
  const timeoutMs = raw.timeout_ms ?? CHILD_DEFAULTS.timeoutMs;
  if (raw.max_timeout_ms !== undefined && raw.max_timeout_ms < timeoutMs) {
    const which = raw.timeout_ms === undefined ? `timeout_ms (${timeoutMs}, the default)` : `timeout_ms (${timeoutMs})`;
    issue(["max_timeout_ms"], `expected an integer >= ${which}, got number ${raw.max_timeout_ms}`, raw.max_timeout_ms);
  }
}

/** The normalized entry (without its name). Assumes checkChild found nothing. */
export function normalizeChild(raw: RawChild, opts: PathOptions): Omit<ChildConfig, "name"> {
  const timeoutMs = raw.timeout_ms ?? CHILD_DEFAULTS.timeoutMs;
  return {
    transport: transportOf(raw) ?? "stdio",
    ...(raw.command !== undefined && { command: configCommand(raw.command, opts) }),
    args: raw.args ?? [],
    env: raw.env ?? {},
    cwd: raw.cwd === undefined ? dirname(opts.path) : configPath(raw.cwd, opts),
    inheritEnv: raw.inherit_env ?? true,
    ...(raw.url !== undefined && { url: raw.url }),
    headers: raw.headers ?? {},
    enabled: raw.enabled ?? (raw.disabled === undefined ? true : !raw.disabled),
    startup: raw.startup ?? "lazy",
    timeoutMs,
    // Within a timer's range like every duration given, so that none needs checking where it is used.
    maxTimeoutMs: raw.max_timeout_ms ?? Math.min(CHILD_DEFAULTS.maxTimeoutFactor * timeoutMs, MAX_TIMER_MS),
    startupTimeoutMs: raw.startup_timeout_ms ?? CHILD_DEFAULTS.startupTimeoutMs,
    firstStartupTimeoutMs:
      raw.startup_timeout_ms ??
      (raw.command !== undefined && fetchesOnFirstRun(raw.command) ? CHILD_DEFAULTS.firstFetchStartupTimeoutMs : CHILD_DEFAULTS.startupTimeoutMs),
    // The legacy SSE transport is a 2025-era transport: there is nothing to ask.
    protocol: raw.protocol ?? (transportOf(raw) === "sse" ? "2025-11-25" : "auto"),
    concurrency: raw.concurrency ?? CHILD_DEFAULTS.concurrency,
    idleTimeoutMs: raw.idle_timeout_ms ?? CHILD_DEFAULTS.idleTimeoutMs,
    ...(raw.description !== undefined && { description: raw.description }),
    ...(raw.expose !== undefined && { expose: raw.expose }),
    ...(raw.prefix !== undefined && { prefix: raw.prefix }),
    tools: { ...(raw.tools?.allow !== undefined && { allow: raw.tools.allow }), deny: raw.tools?.deny ?? [] },
    ...(raw.oauth !== undefined && { oauth: normalizeOAuth(raw.oauth) }),
  };
}

function normalizeOAuth(raw: NonNullable<RawChild["oauth"]>): OAuthConfig {
  return {
    ...(raw.client_id !== undefined && { clientId: raw.client_id }),
    ...(raw.client_secret !== undefined && { clientSecret: raw.client_secret }),
    ...(raw.private_key !== undefined && { privateKey: { pem: raw.private_key, alg: raw.signing_alg ?? "ES256" } }),
    ...(raw.client_metadata_url !== undefined && { clientMetadataUrl: raw.client_metadata_url }),
    scopes: raw.scopes ?? [],
    grant: raw.grant ?? "authorization_code",
    ...(raw.grant === "enterprise" && {
      enterprise: {
        idpTokenEndpoint: raw.idp_token_endpoint!,
        idpClientId: raw.idp_client_id!,
        ...(raw.idp_client_secret !== undefined && { idpClientSecret: raw.idp_client_secret }),
        idToken: raw.id_token!,
      },
    }),
    redirectPort: raw.redirect_port ?? 0,
  };
}
