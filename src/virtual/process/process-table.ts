// Every background process gaggle started: who owns which, the limits, what is remembered after the end, and the notice sent then.
import { mkdir, readdir, stat, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ChildEvents } from "../../children/switchboard.js";
import { countTrees } from "../../children/processes/process-tree.js";
import { GaggleError } from "../../shared/errors.js";
import { recordsToForget, refusal, refusalHint, type SharedLimit } from "../../shared/fair-share.js";
import { canonical, isDirectory } from "../../shared/fs-probes.js";
import type { Logger } from "../../shared/log.js";
import { readView } from "./log-view.js";
import { ManagedProcess, type Forgetting } from "./managed-process.js";
import { checkPolicy, type Policy } from "./policy.js";
import { LIST_URI } from "./resources.js";
import { endedNotice, logUri } from "./views.js";
import type { Visibility } from "../visibility.js";

export interface TableOptions {
  childName: string;
  events: ChildEvents;
  policy: Policy;
  /** Absolute: where a command runs when it names no cwd, and what a relative cwd starts from (the config file's folder). */
  baseDir: string;
  logDir: string;
  maxConcurrent: number;
  /** Processes one principal may run at once; undefined: all of maxConcurrent. */
  maxConcurrentPerPrincipal: number | undefined;
  /** Live processes one principal's running commands may hold at once, descendants included. */
  maxProcesses: number;
  maxOutputBytes: number;
  defaultTimeoutMs: number;
  killGraceMs: number;
  keepFinished: number;
  /** Who lists and reads whose processes. */
  visibility: Visibility;
  log: Logger;
}

export interface RunRequest {
  command: string;
  cwd?: string | undefined;
  timeoutMs?: number | undefined;
  /** Set over gaggle's own environment for this command alone. */
  env?: Record<string, string> | undefined;
}

/** Logs older than this, left by earlier runs of gaggle, are removed when the log folder is first used. */
const STALE_LOG_MS = 7 * 24 * 3600_000;

/** How often each principal's processes are counted while any run. */
const COUNT_EVERY_MS = 100;

export class ProcessTable {
  private readonly processes = new Map<number, ManagedProcess>();
  /**
   * The principal of each start between the limit check and the spawn, so two concurrent runs cannot both take the
   * last place.
   */
  private readonly starting: string[] = [];
  /** The log folder made and swept of stale logs, once; forgotten when that failed, so the next run tries again. */
  private logDirReady: Promise<void> | undefined;
  /** Counts each principal's processes while any command runs (see maxProcesses). */
  private counting: NodeJS.Timeout | undefined;

  constructor(private readonly options: TableOptions) {}

  /** `by`: the principal that will own the process, and the session told when it ends. */
  async run(request: RunRequest, by: { principal: string; session: string }): Promise<ManagedProcess> {
    const cwd = await resolveCwd(this.options.baseDir, request.cwd);
    await checkPolicy(this.options.policy, request.command, cwd);
    const limit: SharedLimit = {
      table: "[virtual.process]",
      totalKey: "max_concurrent",
      total: this.options.maxConcurrent,
      shareKey: "max_concurrent_per_principal",
      share: this.options.maxConcurrentPerPrincipal,
      count: (n) => `${n} running ${n === 1 ? "process" : "processes"}`,
    };
    const refused = refusal(limit, [...this.running().map((entry) => entry.spec.owner), ...this.starting], by.principal);
    if (refused) {
      throw new GaggleError("LIMIT_REACHED", refused.message, {
        hint: refusalHint(limit, refused, "wait for one of yours to end (gg_process_status lists them) or stop one with gg_process_kill"),
      });
    }
    this.starting.push(by.principal);
    let started: ManagedProcess;
    try {
      await this.prepareLogDir();
      started = await ManagedProcess.start({
        command: request.command,
        cwd,
        timeoutMs: request.timeoutMs ?? this.options.defaultTimeoutMs,
        env: request.env ?? {},
        owner: by.principal,
        session: by.session,
        logDir: this.options.logDir,
        maxOutputBytes: this.options.maxOutputBytes,
        killGraceMs: this.options.killGraceMs,
      });
    } finally {
      this.starting.splice(this.starting.indexOf(by.principal), 1);
    }
    // The kernel may hand out a pid again: the finished process that had it is forgotten.
    const previous = this.processes.get(started.pid);
    if (previous) {
      this.forget(previous, {
        why: "the system gave its pid to a newer command, which gaggle started",
        // The newer command may be another principal's: the hint does not send the reader to it.
        hint: "its output is gone with it; read a process's output soon after it ends",
      });
    }
    this.processes.set(started.pid, started);
    this.counting ??= setInterval(() => this.enforceCap(), COUNT_EVERY_MS).unref();
    this.options.events.resourceUpdated(this.options.childName, LIST_URI, this.seers(started));
    void started.ended.then(() => this.onEnded(started));
    return started;
  }

  find(pid: number): ManagedProcess | undefined {
    return this.processes.get(pid);
  }

  /** A process `viewer` may see: one another principal started is not there for it, unless gateway.visibility says "all". */
  get(pid: number, viewer: string): ManagedProcess {
    const found = this.processes.get(pid);
    if (found && this.options.visibility.sees(found.spec.owner, viewer)) return found;
    throw new GaggleError("NOT_FOUND", `no process ${pid}: gaggle did not start it, or it ended long enough ago to be forgotten`, {
      hint: "gg_process_status without a pid lists your processes",
    });
  }

  /** Who hears that process://list changed with `entry`: those whose list shows it. */
  private seers(entry: ManagedProcess): (principal: string) => boolean {
    return (principal) => this.visible(entry, principal);
  }

  visible(entry: ManagedProcess, viewer: string): boolean {
    return this.options.visibility.sees(entry.spec.owner, viewer);
  }

  /** What `viewer` may see of list(). */
  visibleTo(viewer: string): ManagedProcess[] {
    return this.list().filter((entry) => this.visible(entry, viewer));
  }

  /** Running first (oldest first), then finished (most recent first). */
  list(): ManagedProcess[] {
    const all = [...this.processes.values()];
    const running = all.filter((entry) => entry.running);
    const finished = all.filter((entry) => !entry.running).sort((a, b) => (b.endedAt?.getTime() ?? 0) - (a.endedAt?.getTime() ?? 0));
    return [...running, ...finished];
  }

  /** Only the principal that started a process (or the lead of its team) may kill it, from any of its sessions. */
  async kill(pid: number, principal: string): Promise<{ process: ManagedProcess; wasRunning: boolean }> {
    const target = this.get(pid, principal);
    if (!this.options.visibility.governs(target.spec.owner, principal)) {
      const { timeoutMs } = target.spec;
      const end = target.running
        ? timeoutMs > 0
          ? `it is killed at its timeout, ${timeoutMs} ms after it started`
          : "it has no timeout: it runs until it ends or gaggle stops"
        : `it has ended already (${target.status})`;
      throw new GaggleError(
        "PERMISSION_DENIED",
        `process ${pid} belongs to another client (${JSON.stringify(target.spec.owner)}), not to you (${JSON.stringify(principal)})`,
        {
          hint: `only a client with the token that started it can kill it; gg_process_status shows its state, and ${end}`,
        },
      );
    }
    const wasRunning = target.running;
    await target.stop("killed");
    return { process: target, wasRunning };
  }

  /** Kills every process group still running (only those `owner` governs when given); resolves once all are gone. */
  async stopAll(owner?: string): Promise<void> {
    const mine = this.running().filter((entry) => owner === undefined || this.options.visibility.governs(entry.spec.owner, owner));
    await Promise.allSettled(mine.map((entry) => entry.stop("killed")));
  }

  /** Past maxProcesses, every running command of that principal is killed, saying why. */
  private enforceCap(): void {
    const byOwner = new Map<string, ManagedProcess[]>();
    for (const entry of this.running()) byOwner.set(entry.spec.owner, [...(byOwner.get(entry.spec.owner) ?? []), entry]);
    if (byOwner.size === 0) {
      clearInterval(this.counting);
      this.counting = undefined;
      return;
    }
    const cap = this.options.maxProcesses;
    for (const [owner, entries] of byOwner) {
      const count = countTrees(entries.map((entry) => entry.tree)) ?? 0;
      // Those being killed already are still counted until they are gone, and not killed again.
      const left = entries.filter((entry) => entry.stopNote === undefined);
      if (count <= cap || left.length === 0) continue;
      const note =
        `killed by gaggle: ${JSON.stringify(owner)}'s background commands ran ${count} processes at once, past the cap of ${cap} ` +
        "([virtual.process] max_processes), so every one of them was killed; run fewer at once, or raise max_processes";
      this.options.log.warn({ owner, processes: count, max_processes: cap }, "process cap reached: killing the principal's processes");
      for (const entry of left) void entry.stop("killed", note);
    }
  }

  private running(): ManagedProcess[] {
    return [...this.processes.values()].filter((entry) => entry.running);
  }

  private async onEnded(ended: ManagedProcess): Promise<void> {
    const { childName, events, log } = this.options;
    const lastLines = await readLastLines(ended);
    const data = endedNotice(ended, lastLines);
    log.info({ pid: ended.pid, status: ended.status, exit_code: ended.exitCode, duration_ms: ended.runtimeMs }, "process ended");
    const uri = logUri(ended.pid);
    events.notify(ended.spec.session, { log: { level: "info", logger: childName, data }, resourceUpdated: uri });
    events.resourceUpdated(childName, LIST_URI, this.seers(ended));
    this.evictFinished();
  }

  /** Finished processes past keep_finished are forgotten, the oldest of whoever keeps the most first. */
  private evictFinished(): void {
    const oldestFirst = this.list()
      .filter((entry) => !entry.running)
      .reverse();
    const { keepFinished } = this.options;
    const forgetting: Forgetting = {
      why:
        `[virtual.process] keep_finished keeps ${keepFinished} finished ${keepFinished === 1 ? "process" : "processes"}, ` +
        "and newer ones pushed this one out (the oldest of whoever keeps the most goes first)",
      hint: "read a process's output soon after it ends, or raise [virtual.process] keep_finished; gg_process_status without a pid lists the processes kept",
    };
    for (const old of recordsToForget(oldestFirst, keepFinished, (entry) => entry.spec.owner)) this.forget(old, forgetting);
  }

  /** Readers holding `entry` already may still open its log: `forgetting` is what they are told once it is gone. */
  private forget(entry: ManagedProcess, forgetting: Forgetting): void {
    entry.forgotten = forgetting;
    this.processes.delete(entry.pid);
    void removeQuietly(entry.output.path);
  }

  private prepareLogDir(): Promise<void> {
    this.logDirReady ??= this.makeLogDir().catch((error: unknown) => {
      this.logDirReady = undefined;
      throw error;
    });
    return this.logDirReady;
  }

  private async makeLogDir(): Promise<void> {
    try {
      await mkdir(this.options.logDir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new GaggleError("SERVER_FAILED", `cannot create the process log folder ${this.options.logDir}: ${(error as Error).message}`, {
        hint: "set [virtual.process] log_dir or [gateway] state_dir to a writable folder",
        cause: error,
      });
    }
    const now = Date.now();
    // The sweep is best effort: a folder that cannot be listed still takes new logs.
    const names = await readdir(this.options.logDir).catch(() => []);
    for (const name of names.filter((file) => file.endsWith(".log"))) {
      const path = join(this.options.logDir, name);
      try {
        if (now - (await stat(path)).mtimeMs > STALE_LOG_MS) await unlink(path);
      } catch {
        // Gone already, or another gaggle's: either way not ours to worry about.
      }
    }
  }
}

/**
 * Absolute, existing and a directory, symlinks resolved; relative paths start from `baseDir`, as a configured
 * child's cwd starts from the config file's folder (never from the folder gaggle happened to be started in).
 */
async function resolveCwd(baseDir: string, cwd: string | undefined): Promise<string> {
  const path = resolve(baseDir, cwd ?? ".");
  if (!(await isDirectory(path))) {
    throw new GaggleError("INVALID_ARGS", `cwd "${path}" is not an existing directory`, {
      hint: `pass an existing directory (relative paths start from ${baseDir}, the config file's folder)`,
    });
  }
  return canonical(path);
}

const NOTICE_LINES = 10;

async function readLastLines(entry: ManagedProcess): Promise<string[]> {
  try {
    return (await readView(() => entry.openLog(), entry.output, 0, NOTICE_LINES)).tail;
  } catch {
    return [];
  }
}

async function removeQuietly(path: string): Promise<void> {
  // Already gone, or never made: either way nothing is left.
  await unlink(path).catch(() => {});
}
