// What went wrong when a process could not be started, in words a user can act on.

/**
 * When `error` is gaggle running out of file descriptors (EMFILE, or the system's ENFILE): what that means and what
 * to do, since a pipe or a file that cannot be opened says nothing of the process or file it was for.
 */
export function outOfDescriptors(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "EMFILE" && code !== "ENFILE") return undefined;
  const whose = code === "EMFILE" ? "gaggle has no file descriptors left" : "the system has no file descriptors left";
  return `${whose} (${code}): too many connections, processes or files are open; end some (or raise the limit, ulimit -n, gateway.max_connections) and retry`;
}

/** Ends a sentence that starts with the command: ENOENT and EACCES are the ones a user can fix. */
export function spawnProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "was not found (ENOENT)";
  if (code === "EACCES") return "is not executable (EACCES)";
  const descriptors = outOfDescriptors(error);
  if (descriptors) return `could not be started: ${descriptors}`;
  return `could not be started: ${(error as Error).message}`;
}
