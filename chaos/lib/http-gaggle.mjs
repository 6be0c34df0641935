// Owns the gaggle of the attacks on principals and the workspace: Streamable HTTP with two named tokens, and the
// process, workspace and duckdb children on one folder.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, startHttp } from "./gaggle.mjs";

/** The tokens of the two principals, by name; passed to gaggle through its environment. */
export const TOKENS = { ann: "chaos-ann-token-0123456789", bob: "chaos-bob-token-0123456789" };

/**
 * Starts gaggle over HTTP with `ann` and `bob` and the built-in children on `root`; `gatewayExtra` lines go in
 * [gateway]. With `teams`, the goose and team children run too, on the test suite's fake Goose.
 */
export function startTwoPrincipals({ dir, root, mark, gatewayExtra = [], teams = false }) {
  const goose = teams
    ? [
        `[virtual.goose]\ncommand = ${JSON.stringify(fixture("goose/goose.mjs"))}\ncwd = ${JSON.stringify(root)}`,
        `env = { GOOSE_PATH_ROOT = ${JSON.stringify(join(dir, "goose-root"))} }`,
        "[virtual.team]\nenabled = true",
      ]
    : ["[virtual.goose]\nenabled = false", "[virtual.team]\nenabled = false"];
  process.env.GAGGLE_CHAOS_ANN = TOKENS.ann;
  process.env.GAGGLE_CHAOS_BOB = TOKENS.bob;
  const config = join(dir, "children_config.toml");
  writeFileSync(
    config,
    [
      "[gateway]",
      'log_level = "warn"',
      "shutdown_grace_ms = 500",
      'auth_tokens = { ann = "${GAGGLE_CHAOS_ANN}", bob = "${GAGGLE_CHAOS_BOB}" }',
      ...gatewayExtra,
      ...goose,
      "[virtual.process]\nenabled = true\nkill_grace_ms = 300",
      `[virtual.workspace]\nenabled = true\nroots = [${JSON.stringify(root)}]\nkill_grace_ms = 300\nripgrep = false`,
      `[virtual.duckdb]\nenabled = true\nread_write = true\nroots = [${JSON.stringify(root)}]`,
      // A configured server that asks its client for input: what a 2026-07-28 call pauses on.
      `[mcp_servers.protocol]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(fixture("protocol.mjs"))}]`,
      "",
    ].join("\n"),
  );
  return startHttp({ config, mark, dir });
}
