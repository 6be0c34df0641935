// The built-in `goose` child: Goose agents ("goslings"). Not built yet: nothing is registered.
import type { Child } from "../../children/child.js";
import type { VirtualContext } from "../index.js";

export function createGooseChild(_context: VirtualContext): Child | undefined {
  return undefined;
}
