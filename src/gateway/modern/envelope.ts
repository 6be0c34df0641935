// The per-request _meta envelope a 2026-07-28 request carries in place of a session: who is asking, and what it can do.
import type { ClientCapabilities, Implementation, LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { describeJson, isObject } from "../../shared/json.js";
import { WireError } from "../../shared/errors.js";
import { META, MODERN_ERRORS, MODERN_VERSIONS } from "../../shared/modern-protocol.js";

export interface Envelope {
  protocolVersion: string;
  clientCapabilities: ClientCapabilities;
  clientInfo: Implementation | undefined;
  /** Absent: the client wants no log messages for this request. */
  logLevel: LoggingLevel | undefined;
}

const LEVELS = new Set(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]);

/** Reads the envelope from a request's params; a missing or malformed field is -32602, an unknown version -32022. */
export function readEnvelope(params: unknown): Envelope {
  const meta = isObject(params) ? params._meta : undefined;
  if (!isObject(meta))
    throw invalid(`the request has no params._meta; a 2026-07-28 request carries ${META.protocolVersion} and ${META.clientCapabilities} there`);
  const version = meta[META.protocolVersion];
  if (typeof version !== "string") throw invalid(`params._meta["${META.protocolVersion}"] must be a string; found ${describeJson(version)}`);
  if (!MODERN_VERSIONS.includes(version)) throw unsupportedVersion(version);
  const capabilities = meta[META.clientCapabilities];
  if (!isObject(capabilities)) throw invalid(`params._meta["${META.clientCapabilities}"] must be an object; found ${describeJson(capabilities)}`);
  const info = meta[META.clientInfo];
  if (info !== undefined && !(isObject(info) && typeof info.name === "string" && typeof info.version === "string")) {
    throw invalid(`params._meta["${META.clientInfo}"] must be {name, version}; found ${describeJson(info)}`);
  }
  const level = meta[META.logLevel];
  if (level !== undefined && !(typeof level === "string" && LEVELS.has(level))) {
    throw invalid(`params._meta["${META.logLevel}"] must be a log level such as "info"; found ${describeJson(level)}`);
  }
  return {
    protocolVersion: version,
    clientCapabilities: capabilities as ClientCapabilities,
    clientInfo: info as Implementation | undefined,
    logLevel: level as LoggingLevel | undefined,
  };
}

export function unsupportedVersion(requested: unknown): WireError {
  return new WireError(
    MODERN_ERRORS.unsupportedVersion,
    `Unsupported protocol version ${describeJson(requested)}: this server speaks ${MODERN_VERSIONS.join(", ")} per request, and 2025-11-25 through initialize`,
    { supported: [...MODERN_VERSIONS], requested },
  );
}

/** The request's _meta without the envelope's own keys: what passes on to a child (traceparent, a progress token, the caller's keys). */
export function passedMeta(params: unknown): Record<string, unknown> | undefined {
  const meta = isObject(params) ? params._meta : undefined;
  if (!isObject(meta)) return undefined;
  const kept = Object.entries(meta).filter(([key]) => !Object.values(META).includes(key as never));
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

function invalid(message: string): WireError {
  return new WireError(ErrorCode.InvalidParams, message);
}
