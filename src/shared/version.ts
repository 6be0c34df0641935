// gaggle's own name and version, read once from its package.json: the nearest one above this module that is
// gaggle's, so the same code finds it from dist/shared/ and from the single-file dist/cli.js alike.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "mcp-gaggle";

function ownPackage(): { name: string; version: string } {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    try {
      // eslint-disable-next-line no-restricted-syntax -- synchronous: read once, as the module loads, before gaggle serves anything.
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === "string") return { name: pkg.name, version: pkg.version };
    } catch {
      // No package.json here, or not one that can be read: look further up.
    }
    if (dirname(dir) === dir) throw new Error(`gaggle's package.json (${PACKAGE_NAME}) was not found in ${start} or above it`);
  }
}

export const GAGGLE_NAME = "gaggle";
export const GAGGLE_VERSION: string = ownPackage().version;
