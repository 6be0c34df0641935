// The environment a stdio child starts with: gaggle's own with `env` merged over it, or a minimal safe set.

/** What a child gets from gaggle's environment when `inherit_env = false`: enough to find programs and a home. */
const SAFE_KEYS = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "TMPDIR", "TZ", "SYSTEMROOT"];

/** gaggle's own secrets: never inherited by a child (a child's `env` may still set them on purpose). */
const GAGGLE_SECRETS = ["GAGGLE_AUTH_TOKEN"];

/**
 * The config's secrets (see config/secrets.ts): a variable of gaggle's environment holding one of them (the
 * `${VAR}` a token was expanded from) is never inherited, or every child (a background process, a workspace
 * shell, a configured server) would hold every principal's token. Set once gaggle has read its config.
 */
let withheld = new Set<string>();

export function withholdFromChildren(secrets: Iterable<string>): void {
  withheld = new Set([...secrets].filter((secret) => secret.length > 0));
}

/** Every child's environment is made here: what it inherits, less gaggle's secrets, with its own `env` over it. */
export function childEnv(own: Record<string, string>, inherit: boolean, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [key, value] of Object.entries(parent)) {
    if (value === undefined || !(inherit || SAFE_KEYS.includes(key))) continue;
    if (GAGGLE_SECRETS.includes(key) || withheld.has(value)) continue;
    base[key] = value;
  }
  return { ...base, ...own };
}
