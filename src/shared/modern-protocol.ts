// The 2026-07-28 revision's wire vocabulary: its version, the reserved _meta keys, and the error codes it adds.

export const MODERN_VERSION = "2026-07-28";

/** The versions a modern request may claim; an older one is spoken through initialize and a session. */
export const MODERN_VERSIONS: readonly string[] = [MODERN_VERSION];

/** The revisions before 2026-07-28 that a client names in MCP-Protocol-Version on a session's requests. */
export const LEGACY_VERSIONS: readonly string[] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

export const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
} as const;

/** The error codes 2026-07-28 defines (the range -32020..-32099 is the specification's own). */
export const MODERN_ERRORS = {
  headerMismatch: -32020,
  missingCapability: -32021,
  unsupportedVersion: -32022,
} as const;

const MODERN_ERROR_CODES = new Set<number>(Object.values(MODERN_ERRORS));

/** True for the codes only the 2026-07-28 era answers with: a refusal of the request as a whole. */
export function isModernErrorCode(code: unknown): boolean {
  return typeof code === "number" && MODERN_ERROR_CODES.has(code);
}

/** Methods of the 2025 era that 2026-07-28 removed; a modern client that sends one is told the method is not found. */
export const REMOVED_METHODS = new Set([
  "initialize",
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe",
  "notifications/initialized",
  "notifications/roots/list_changed",
]);

/** The results a client may cache, and so carry ttlMs and cacheScope. */
export const CACHEABLE_METHODS = new Set([
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
]);

/** Whether a message claims the modern era: its params' _meta names a protocol version. */
export function claimsModernEra(message: unknown): boolean {
  const params = (message as { params?: { _meta?: unknown } } | undefined)?.params;
  const meta = params?._meta;
  return typeof meta === "object" && meta !== null && META.protocolVersion in meta;
}
