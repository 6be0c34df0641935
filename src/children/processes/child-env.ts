// The environment a stdio child starts with: gaggle's own with `env` merged over it, or a minimal safe set.

/** What a child gets from gaggle's environment when `inherit_env = false`: enough to find programs and a home. */
const SAFE_KEYS = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "TMPDIR", "TZ", "SYSTEMROOT"];

/** gaggle's own secrets: never inherited by a child (a child's `env` may still set them on purpose). */
const GAGGLE_SECRETS = ["GAGGLE_AUTH_TOKEN"];

export function childEnv(own: Record<string, string>, inherit: boolean, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [key, value] of Object.entries(parent)) {
    if (value !== undefined && (inherit || SAFE_KEYS.includes(key)) && !GAGGLE_SECRETS.includes(key)) base[key] = value;
  }
  return { ...base, ...own };
}
