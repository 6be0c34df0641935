// One temporary folder per test run: TMPDIR points into it for the workers and every process they start, and
// it is removed when the run ends, so no test leaves its files behind in the system's temporary folder. The
// state folder of the built-in children (XDG_STATE_HOME) is inside it too, not in the user's home. Stdio gaggles
// run standalone unless a test asks for the daemon.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { fixture } from "./helpers/paths.js";

export default async function setup(): Promise<() => void> {
  const root = mkdtempSync(join(tmpdir(), "gaggle-tests-"));
  process.env.TMPDIR = root;
  process.env.XDG_STATE_HOME = join(root, "state");
  // Every gaggle of the run starts from one code cache, though most have a state folder of their own: compiled
  // once, not at each start (the code cache's own tests choose theirs).
  process.env.GAGGLE_CODE_CACHE = join(root, "code-cache");
  // The fixtures' SDK and zod in one file, which each fixture the run starts loads (fixtures/lib/sdk.mjs).
  const fixtureSdk = join(root, "fixture-sdk.mjs");
  // Some CommonJS the SDK's HTTP transports bring along requires Node's own modules, which an ES module has no require for.
  const banner = 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);';
  await build({
    entryPoints: [fixture("lib/sdk-parts.mjs")],
    outfile: fixtureSdk,
    bundle: true,
    platform: "node",
    format: "esm",
    banner: { js: banner },
    logLevel: "warning",
  });
  process.env.GAGGLE_FIXTURE_SDK = fixtureSdk;
  // Each stdio gaggle a test starts runs alone, as it did before the daemon; the daemon's own tests clear this.
  process.env.GAGGLE_STANDALONE = "1";
  return () => rmSync(root, { recursive: true, force: true });
}
