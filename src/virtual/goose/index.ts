// The built-in `goose` child: Goose agents ("goslings"), built from `[virtual.goose]` unless it is disabled.
import { dirname } from "node:path";
import { childEnv } from "../../children/child-env.js";
import type { VirtualContext } from "../context.js";
import { GooseChild } from "./goose-child.js";

export function createGooseChild(context: VirtualContext): GooseChild | undefined {
  const settings = context.config.virtual.goose;
  if (!settings.enabled) return undefined;
  // The config layer made cwd absolute (the config file's folder by default), and a command path too.
  const cwd = settings.cwd ?? dirname(context.config.path);
  const command = settings.command;
  // NO_COLOR=1 keeps ANSI codes out of what gaggle parses, whatever the environment says.
  const env = { ...childEnv(settings.env, true), NO_COLOR: "1" };
  return new GooseChild(context.switchboard, settings, { command, cwd, env, graceMs: context.config.gateway.shutdownGraceMs });
}
