// Owns running git for the team child: one command, its exit code and output, never a prompt for credentials.
import { execFile } from "node:child_process";
import { childEnv } from "../../children/processes/child-env.js";

export const GIT_TIMEOUT_MS = 60_000;

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function git(args: readonly string[], cwd: string): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile(
      "git",
      args,
      { cwd, timeout: GIT_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024, env: childEnv({ GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" }, true) },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        const why = error && typeof error.code !== "number" ? `${error.message}\n` : "";
        resolve({ code, stdout: stdout.toString(), stderr: `${why}${stderr.toString()}`.trim() });
      },
    );
  });
}

/** The worktrees git knows for the repository at `cwd`: path and branch (short name, or null when detached). */
export async function listWorktrees(cwd: string): Promise<Array<{ path: string; branch: string | null }>> {
  const result = await git(["worktree", "list", "--porcelain"], cwd);
  if (result.code !== 0) return [];
  const entries: Array<{ path: string; branch: string | null }> = [];
  for (const line of result.stdout.split("\n")) {
    if (line.startsWith("worktree ")) entries.push({ path: line.slice("worktree ".length), branch: null });
    else if (line.startsWith("branch ") && entries.length > 0) entries.at(-1)!.branch = line.slice("branch ".length).replace(/^refs\/heads\//, "");
  }
  return entries;
}
