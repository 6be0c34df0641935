// Owns the public API of the config module: load a gaggle config file, its types, and its errors.
export { ConfigError, type ConfigErrorCode, type ConfigIssue, describeValue, formatPath } from "./errors.js";
export { expandEnv, expandString } from "./expand.js";
export {
  CONFIG_FILE_NAMES,
  type FindConfigOptions,
  configSearchPaths,
  findConfigPath,
  loadConfig,
  validateConfigText,
} from "./load.js";
export { CHILD_DEFAULTS } from "./child.js";
export {
  type ChildConfig,
  type GaggleConfig,
  type GatewayConfig,
  type TransportKind,
  EXPOSE_MODES,
  GATEWAY_DEFAULTS,
  LOG_LEVELS,
  SERVER_NAME_PATTERN,
  TRANSPORT_KINDS,
  VIRTUAL_CHILD_NAMES,
  childConfigSchema,
  gaggleConfigSchema,
  gatewayConfigSchema,
  serverNameProblem,
} from "./schema.js";
export { editDistance, nearest } from "./suggest.js";
