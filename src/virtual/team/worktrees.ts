// Owns members' git worktrees: `git worktree add -b BRANCH DIR/NAME` in the principal's own names, its init script,
// reuse, and rollback.
import { mkdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { LOCAL_PRINCIPAL } from "../../children/child.js";
import { GaggleError } from "../../shared/errors.js";
import { canonical } from "../../shared/fs-probes.js";
import { oneLine } from "../goose/format.js";
import { git, listWorktrees } from "./git.js";
import { INIT_SCRIPT, runInitScript, type InitOutcome } from "./init-script.js";
import type { WorktreeRecord } from "./records.js";

export interface WorktreeOptions {
  /** Where the repository is found: the goose child's cwd. */
  sourceCwd: string;
  /** [virtual.team] worktrees_dir, absolute; undefined: <state dir>/team/worktrees/<repository folder name>. */
  configuredDir: string | undefined;
  stateDir: string;
  graceMs: number;
  env: Record<string, string>;
}

export interface CreatedWorktree {
  record: WorktreeRecord;
  init: InitOutcome;
}

/** Where one principal's worktree of one name is: its folder under the worktrees folder, and its branch. */
export interface WorktreePlace {
  /** The folder holding this principal's worktrees. */
  dir: string;
  path: string;
  branch: string;
}

/**
 * Worktree names are each principal's own. The local principal's worktree NAME is branch NAME in <worktrees>/NAME; a
 * named principal's is branch `@<principal>/NAME` in <worktrees>/@<principal>/NAME. A worktree_name never starts with
 * "@", so no principal's branch or folder can be, or be the parent of, another principal's.
 */
export function placeOf(worktreesDir: string, owner: string, name: string): WorktreePlace {
  if (owner === LOCAL_PRINCIPAL) return { dir: worktreesDir, path: join(worktreesDir, name), branch: name };
  const space = principalSpace(owner);
  const dir = join(worktreesDir, space);
  return { dir, path: join(dir, name), branch: `${space}/${name}` };
}

/**
 * `@` and the principal's name, every character but [a-z0-9_-] written %XX: a git ref part and a folder name for any
 * token name (no "..", no ".lock" or "." at its end), and two names differing only in case stay two folders where
 * the file system ignores case.
 */
function principalSpace(owner: string): string {
  const encoded = [...Buffer.from(owner, "utf8")]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return /[a-z0-9_-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
  return `@${encoded}`;
}

/** git commands on one repository run one at a time: git's own locks refuse concurrent worktree changes. */
export class Worktrees {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: WorktreeOptions) {}

  /**
   * A new branch and checkout, then the init script, which gets `env` over the environment children inherit;
   * if the script fails, both are removed again and this throws.
   */
  create(owner: string, name: string, env: Record<string, string>, theirs: readonly WorktreeRecord[]): Promise<CreatedWorktree> {
    return this.serial(async () => {
      const repo = await this.repository();
      const { dir, path, branch } = placeOf(this.dirFor(repo), owner, name);
      await refuseTheirs(name, path, theirs);
      await mkdir(dir, { recursive: true });
      const added = await git(["worktree", "add", "-b", branch, path], repo);
      if (added.code !== 0) {
        throw new GaggleError("INVALID_ARGS", `git worktree add -b ${branch} ${path} failed: ${problemOf(added.stderr)}`, {
          hint: /already exists/.test(added.stderr)
            ? `use_existing_worktree = true reuses an existing worktree "${name}"; or pick another worktree_name`
            : undefined,
        });
      }
      const record: WorktreeRecord = { name, path, branch, created: true };
      const init = await runInitScript({
        worktree: path,
        env: { ...this.options.env, ...env, GG_WORKTREE_NAME: name, GG_WORKTREE_PATH: path, GG_REPO_ROOT: repo },
        graceMs: this.options.graceMs,
      });
      if (init.ran && !init.ok) {
        const undone = await this.undo(repo, record);
        throw new GaggleError("SERVER_FAILED", `${init.problem} in the new worktree ${path}; ${undone}. Its output:\n${init.output || "(none)"}`, {
          hint: `fix ${INIT_SCRIPT} on the branch the worktree starts from, then add the member again`,
        });
      }
      return { record, init };
    });
  }

  /**
   * The principal's worktree of this name, which already exists; no script runs. `recorded` are the worktree paths
   * the principal's own members were given: one of them outside the principal's folder (made before worktree names
   * were each principal's own) is theirs to reuse too. `theirs` are the worktrees other principals' members were given.
   */
  reuse(owner: string, name: string, recorded: readonly string[], theirs: readonly WorktreeRecord[]): Promise<WorktreeRecord> {
    return this.serial(async () => {
      const repo = await this.repository();
      const { dir, path } = placeOf(this.dirFor(repo), owner, name);
      await refuseTheirs(name, path, theirs);
      const known = await listWorktrees(repo);
      // Compared as the folders they really are, symlinks resolved.
      const [real, realDir, knownReal, knownParents, mine] = await Promise.all([
        canonical(path),
        canonical(dir),
        Promise.all(known.map((entry) => canonical(entry.path))),
        Promise.all(known.map((entry) => canonical(join(entry.path, "..")))),
        Promise.all(recorded.map(canonical)),
      ]);
      const found =
        known.find((_, at) => knownReal[at] === real) ?? known.find((entry, at) => basename(entry.path) === name && mine.includes(knownReal[at]!));
      if (!found) {
        const under = known.filter((_, at) => knownParents[at] === realDir).map((entry) => basename(entry.path));
        throw new GaggleError("NOT_FOUND", `no existing worktree "${name}" at ${path}`, {
          hint: under.length > 0 ? `existing worktrees there: ${under.join(", ")}` : "leave out use_existing_worktree to create it",
        });
      }
      return { name, path: found.path, branch: found.branch ?? "(detached)", created: false };
    });
  }

  /** After a failed add: the worktree gaggle created for it goes, with its branch. */
  rollback(record: WorktreeRecord): Promise<string> {
    if (!record.created) return Promise.resolve("the existing worktree was left as it was");
    return this.serial(async () => this.undo(await this.repository(), record));
  }

  private async undo(repo: string, record: WorktreeRecord): Promise<string> {
    const removed = await git(["worktree", "remove", "--force", record.path], repo);
    const deleted = await git(["branch", "-D", record.branch], repo);
    const problems = [removed, deleted].filter((result) => result.code !== 0).map((result) => problemOf(result.stderr));
    return problems.length === 0
      ? `the worktree and branch "${record.branch}" were removed again`
      : `rolling back left something behind: ${problems.join("; ")}`;
  }

  private async repository(): Promise<string> {
    const top = await git(["rev-parse", "--show-toplevel"], this.options.sourceCwd);
    if (top.code !== 0) {
      throw new GaggleError(
        "INVALID_ARGS",
        `worktree_name needs a git repository, and ${this.options.sourceCwd} (the goose child's cwd) is not in one`,
        {
          hint: "set [virtual.goose] cwd to a folder inside your repository",
        },
      );
    }
    return top.stdout.trim();
  }

  private dirFor(repo: string): string {
    return this.options.configuredDir ?? join(this.options.stateDir, "team", "worktrees", basename(repo));
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }
}

/**
 * The local principal's place of a name is straight in the worktrees folder, where a named principal's member may have
 * been given a worktree of that name (before worktree names were each principal's own): that one stays its owner's,
 * neither reused nor in the way of a clear answer.
 */
async function refuseTheirs(name: string, path: string, theirs: readonly WorktreeRecord[]): Promise<void> {
  const real = await canonical(path);
  const theirsReal = await Promise.all(theirs.map((record) => canonical(record.path)));
  const found = theirs.find((_, at) => theirsReal[at] === real);
  if (!found) return;
  throw new GaggleError(
    "INVALID_ARGS",
    `worktree_name "${name}" is taken: ${path} (branch ${found.branch}) is the worktree a member of another principal's team was given, and it stays theirs`,
    { hint: "pick another worktree_name; the name is free again once that worktree and its branch are removed (git worktree remove, git branch -D)" },
  );
}

/** git's own words for what went wrong: its fatal and error lines, else all it said, on one line. */
function problemOf(stderr: string): string {
  const lines = stderr.split("\n").filter((line) => /^(fatal|error):/.test(line));
  return oneLine(lines.length > 0 ? lines.join(" ") : stderr, 500);
}
