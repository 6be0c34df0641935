// File-system failures as the workspace tools report them: a missing file is NOT_FOUND, a refused one
// PERMISSION_DENIED, anything else EXECUTION_ERROR with the system's own words.
import { GaggleError, errorMessage } from "../../shared/errors.js";

export function fsFailure(error: unknown, path: string): GaggleError {
  if (error instanceof GaggleError) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === "ENOENT" || code === "ENOTDIR") {
    return new GaggleError("NOT_FOUND", `${path} does not exist`, { hint: "check the path with LS or GlobTool" });
  }
  if (code === "EACCES" || code === "EPERM") {
    return new GaggleError("PERMISSION_DENIED", `${path}: the system refuses access (${code})`, { cause: error });
  }
  if (code === "EISDIR") return new GaggleError("INVALID_ARGS", `${path} is a folder, not a file`, { hint: "list it with LS" });
  return new GaggleError("EXECUTION_ERROR", `${path}: ${errorMessage(error)}`, { cause: error });
}
