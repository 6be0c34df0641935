// What went wrong when a process could not be started, in words a user can act on.

/** Ends a sentence that starts with the command: ENOENT and EACCES are the ones a user can fix. */
export function spawnProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "was not found (ENOENT)";
  if (code === "EACCES") return "is not executable (EACCES)";
  return `could not be started: ${(error as Error).message}`;
}
