// The built-in `process` child: background commands (gg_process_*). Not built yet: nothing is registered.
import type { Child } from "../../children/child.js";
import type { VirtualContext } from "../index.js";

export function createProcessChild(_context: VirtualContext): Child | undefined {
  return undefined;
}
