// What a workspace tool is given: its settings, and for each call where it stands (the folder its relative paths start from, and how a path is confined to the roots it may reach).
import type { CallContext } from "../../children/child.js";
import type { WorkspaceSettings } from "../../config/virtual/workspace.js";

/** Where one call stands. */
export interface Place {
  /** The session's shell's working directory, or where its shell would start. */
  cwd: string;
  /** The real path of `path` (relative to `cwd`), or PERMISSION_DENIED naming the roots. */
  confine(path: string): Promise<string>;
  /** `real` (symlinks resolved: a descriptor's path) lies under the roots this call may reach. */
  inside(real: string): boolean;
  /** The roots this call may reach, as a refusal names them. */
  roots: string;
}

export interface Workspace {
  readonly settings: WorkspaceSettings;
  place(ctx: CallContext): Promise<Place>;
}
