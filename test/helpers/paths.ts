// Absolute paths tests need: the built CLI and the fixture servers.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const CLI = `${ROOT}dist/cli.js`;

export function fixture(name: string): string {
  return `${ROOT}fixtures/${name}`;
}

/** A TOML child entry that runs a fixture with this Node binary. */
export function fixtureChild(name: string, script: string, extra = ""): string {
  return `[mcp_servers.${name}]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(fixture(script))}]\n${extra}\n`;
}

/** Config lines that leave out the built-in virtual children, for tests that assert exact lists. */
export const NO_BUILT_INS = "[virtual.process]\nenabled = false\n\n[virtual.goose]\nenabled = false\n\n[virtual.team]\nenabled = false\n";

/** Where the McpChild instances a test builds itself keep sign-ins: a scratch folder of the test file's own. */
export const STATE_DIR = mkdtempSync(join(tmpdir(), "gaggle-test-state-"));
