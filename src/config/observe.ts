// `gateway.admin`, `[telemetry]` and `[audit]`: where gaggle shows what it does (a status page, metrics, health), where
// it sends traces, and where it writes one line per call. Validated with the rest of the config.
import { z } from "zod";
import { parseListenAddress, portProblem, type ListenAddress } from "../shared/listen-address.js";
import { describeValue } from "./errors.js";
import { closed, expected, oneOf } from "./zod-kit.js";

/** `gateway.admin`: "HOST:PORT" (or "PORT" on loopback) to serve the admin listener there; false for none, even in the daemon. */
export const adminAddressSchema = z.unknown().transform((value, ctx): ListenAddress | false => {
  if (value === false) return false;
  const address = typeof value === "string" ? parseListenAddress(value) : undefined;
  if (address) return address;
  const problem = typeof value === "string" ? portProblem(value) : undefined;
  const message =
    typeof value === "string"
      ? `expected "HOST:PORT", "PORT" or "[IPV6]:PORT", got ${JSON.stringify(value)}${problem ? `: ${problem}` : ""}`
      : `expected "HOST:PORT", "PORT" or false, got ${describeValue(value)}`;
  ctx.addIssue({ code: "custom", message, input: value });
  return z.NEVER;
});

export const AUDIT_ARGUMENTS = ["none", "keys", "hash", "full"] as const;

/** `[audit]`: one JSON line per tool call, resource read and prompt get. */
export const auditSchema = closed({
  /** The file written; relative paths are read from the config file's folder. No path, no file. */
  path: z.string(expected("a file path")).min(1).optional(),
  /**
   * What a record keeps of a call's arguments: nothing, their names (the default), a SHA-256 of their JSON, or
   * all of them with the values of secret-looking names (token, password, key...) replaced.
   */
  arguments: oneOf(AUDIT_ARGUMENTS).default("keys"),
  /** Past this size the file is renamed to PATH.1 (the older ones shifting up) and a new one begun. */
  max_bytes: z
    .int(expected("an integer >= 1024"))
    .min(1024)
    .default(10 * 1024 * 1024),
  /** Rotated files kept besides the one being written. */
  keep: z.int(expected("an integer from 0 to 100")).min(0).max(100).default(3),
}).transform((raw) => ({ path: raw.path, arguments: raw.arguments, maxBytes: raw.max_bytes, keep: raw.keep }));

export type AuditSettings = z.output<typeof auditSchema>;
export type AuditArguments = (typeof AUDIT_ARGUMENTS)[number];

/**
 * `[telemetry]`: OpenTelemetry traces over OTLP/HTTP. The standard OTEL_* variables work as well and are read by
 * the exporter; the table is for a config that carries its own. Without an endpoint here or in
 * OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, no trace is made.
 */
export const telemetrySchema = closed({
  /** The collector's base URL (traces go to ENDPOINT/v1/traces), as OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: z.url({ protocol: /^https?$/, ...expected("an http(s) URL") }).optional(),
  /** The full URL traces are posted to, as OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. */
  traces_endpoint: z.url({ protocol: /^https?$/, ...expected("an http(s) URL") }).optional(),
  /** Sent with every export, e.g. an API key of a hosted collector (usually "${VAR}"). */
  headers: z.record(z.string(), z.string(expected("a string")), expected("a table of header = value")).default({}),
  /** The service.name of gaggle's spans (OTEL_SERVICE_NAME wins). */
  service_name: z.string(expected("a string")).min(1).default("gaggle"),
  /** false turns traces off whatever the environment says. */
  enabled: z.boolean(expected("true or false")).default(true),
}).transform((raw) => ({
  endpoint: raw.endpoint,
  tracesEndpoint: raw.traces_endpoint,
  headers: raw.headers,
  serviceName: raw.service_name,
  enabled: raw.enabled,
}));

export type TelemetrySettings = z.output<typeof telemetrySchema>;

export const AUDIT_DEFAULTS: AuditSettings = auditSchema.parse({});
export const TELEMETRY_DEFAULTS: TelemetrySettings = telemetrySchema.parse({});

/**
 * Whether traces are wanted: an endpoint in the table or in the standard variables, unless the table, OTEL_SDK_DISABLED
 * or OTEL_TRACES_EXPORTER=none turns them off. Decided before anything of OpenTelemetry is loaded.
 */
export function tracesWanted(settings: TelemetrySettings, env: NodeJS.ProcessEnv): boolean {
  if (!settings.enabled || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return false;
  return Boolean(settings.endpoint ?? settings.tracesEndpoint ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT);
}
