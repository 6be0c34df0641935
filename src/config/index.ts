// Owns the public API of the config module: load a gaggle config file, its types, and its errors.
export { ConfigError, describeValue, issuePlaces } from "./errors.js";
export { expandEnv, expandString } from "./expand.js";
export { emptyConfig, findConfigPath, loadConfig, validateConfigText } from "./load.js";
export { makeStateDir, stateDir } from "./state-dir.js";
export { bearerTokens, configSecrets } from "./secrets.js";
export { fetchesOnFirstRun } from "./child.js";
export {
  type AgentConfig,
  type ChildConfig,
  type GaggleConfig,
  type OAuthConfig,
  type EnterpriseConfig,
  GATEWAY_DEFAULTS,
  LOG_LEVELS,
  VIRTUAL_CHILD_NAMES,
} from "./schema.js";
export { ConfigWatcher, type ConfigFollower } from "./watch.js";
