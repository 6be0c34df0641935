// The built-in `goose` child: Goose agents ("goslings"), built from `[virtual.goose]` unless it is disabled, or
// Goose is not installed and nobody asked for it.
import { childEnv } from "../../children/processes/child-env.js";
import { findExecutable } from "../../shared/fs-checks.js";
import { logger } from "../../shared/log.js";
import type { GooseSettings } from "../../config/virtual/goose.js";
import type { BuiltIn } from "../context.js";
import { GooseChild } from "./goose-child.js";
import { Visibility } from "../visibility.js";

export const gooseChild: BuiltIn<GooseSettings> = {
  create(settings, { switchboard, config, inForce, members }) {
    // The config layer made cwd absolute (the config file's folder by default), and a command path too.
    const { command, cwd } = settings;
    // NO_COLOR=1 keeps ANSI codes out of what gaggle parses, whatever the environment says.
    const env: Record<string, string> = { ...childEnv(settings.env, true), NO_COLOR: "1" };
    // Without Goose its tools would only fail: they are left out unless asked for with enabled = true.
    const lookup = findExecutable(command, cwd, env.PATH);
    if ("missing" in lookup) {
      if (!settings.required) {
        return { leftOut: "its command is not found; set [virtual.goose] enabled = true to keep it", about: { command } };
      }
      logger({ child: "goose" }).error(
        { command },
        "[virtual.goose] is enabled, but its command is not found: every run_goose will fail until Goose is installed",
      );
    }
    return new GooseChild(switchboard, settings, { command, cwd, env, graceMs: config.gateway.shutdownGraceMs }, Visibility.of(inForce, members));
  },
  check(settings) {
    const lookup = findExecutable(settings.command, settings.cwd, childEnv(settings.env, true).PATH);
    if ("found" in lookup) return { ok: true, notes: [`Goose: ${lookup.found}`] };
    if (!settings.required) return undefined;
    return { ok: false, notes: [`its command ${settings.command} is not found: install Goose, or set [virtual.goose] command`] };
  },
};
