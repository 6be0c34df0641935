// `[virtual.agents]`: the switches of the built-in `agents` child; the agents themselves are `[agents.NAME]` tables
// (config/agents.ts).
import { z } from "zod";
import { expected, settingsTable } from "../zod-kit.js";
import { builtInSettings } from "./settings.js";

const flag = () => z.boolean(expected("true or false"));

const table = settingsTable({
  /** On by default: the child is there once an `[agents.NAME]` table is. */
  enabled: flag().default(true),
  expose: flag().optional(),
});

export const agentsSettings = builtInSettings(table);

export type AgentsSettings = ReturnType<typeof agentsSettings.absolute>;
