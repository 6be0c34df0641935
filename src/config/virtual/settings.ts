// What a built-in child's `[virtual.NAME]` table is to the config: its schema, and how the paths in it are read.
import type { z } from "zod";
import type { PathOptions } from "../paths.js";

/** Every built-in child has these two, whatever else its table holds. */
export interface BuiltInSwitches {
  /** Whether the child is there at all. */
  enabled: boolean;
  /**
   * Unset: offered as gateway.expose says (its tools listed under their own names in proxy mode). true: its tools
   * listed under their own names in every mode. false: reached through the meta-tools only.
   */
  expose?: boolean | undefined;
}

export interface BuiltInSettings<Table extends BuiltInSwitches = BuiltInSwitches, Settings extends BuiltInSwitches = Table> {
  /** The table as written, read into its settings: defaults filled in, keys in camelCase. */
  table: z.ZodType<Table>;
  /** The settings with every path in them absolute, read as paths are read everywhere in the config file. */
  absolute(table: Table, file: PathOptions): Settings;
}

/** A table without paths to read is its settings as it is. */
export function builtInSettings<Table extends BuiltInSwitches>(table: z.ZodType<Table>): BuiltInSettings<Table>;
export function builtInSettings<Table extends BuiltInSwitches, Settings extends BuiltInSwitches>(
  table: z.ZodType<Table>,
  absolute: (table: Table, file: PathOptions) => Settings,
): BuiltInSettings<Table, Settings>;
export function builtInSettings(
  table: z.ZodType<BuiltInSwitches>,
  absolute: (table: BuiltInSwitches, file: PathOptions) => BuiltInSwitches = (same) => same,
): BuiltInSettings {
  return { table, absolute };
}
