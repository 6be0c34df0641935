// A config file's text loaded as gaggle's config layer loads it, from a fresh temporary folder, for tests that build parts directly.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validateConfigText, type ChildConfig, type GaggleConfig } from "../../src/config/index.js";

export function loadConfig(text: string, env: NodeJS.ProcessEnv = process.env): GaggleConfig {
  const dir = mkdtempSync(join(tmpdir(), "gaggle-config-"));
  return validateConfigText(text, join(dir, "children_config.toml"), env);
}

/** The one child server a config text declares. */
export function childConfigOf(entry: string): ChildConfig {
  const [child] = loadConfig(entry).children;
  if (!child) throw new Error(`the config declares no child server:\n${entry}`);
  return child;
}
