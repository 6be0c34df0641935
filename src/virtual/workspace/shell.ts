// One client session's persistent bash: it leads its own process group (tracked like every child process), runs
// one command at a time as a job of its own group, and keeps what each command changed.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { cancelledError, type Cancellation } from "../../children/calls/cancellation.js";
import { childEnv } from "../../children/processes/child-env.js";
import { GroupProcess } from "../../children/processes/group-process.js";
import { outOfDescriptors } from "../../children/processes/spawn-problem.js";
import { countTrees, groupGone, terminateTree, type ProcessTree } from "../../children/processes/process-tree.js";
import { unwatchFolder, unwatchTree, watchFolder, watchTree } from "../../children/processes/reaper.js";
import { GaggleError, errorMessage } from "../../shared/errors.js";
import { runLine, shellSetup } from "./shell-script.js";

export interface ShellOptions {
  cwd: string;
  /** After SIGTERM, how long a command's group (or the shell's) gets before SIGKILL. */
  graceMs: number;
  /** How many processes the session's commands may run at once, counted while a command runs and as it ends. */
  maxProcesses: number;
}

export interface CommandRun {
  /** stdout and stderr in the order written, up to the cap. */
  output: string;
  /** Characters past the cap, counted and dropped. */
  dropped: number;
  /** The job's exit status (128 + N for a signal); undefined when it was stopped before it ended. */
  status: number | undefined;
  /**
   * Set when the command was killed: past its time, cancelled, or when the session's commands ran more
   * processes at once than maxProcesses (then every process they started was killed).
   */
  stopped?: "timeout" | "cancelled" | "processes";
  /** With stopped "processes": how many were found running. */
  processes?: number;
}

/** How often the session's processes are counted while a command runs. */
const COUNT_EVERY_MS = 100;

/** A shell that went quiet this long after its command was killed is taken for broken, and ended. */
const AFTER_KILL_MS = 5000;

/**
 * The length of a command's end-marker nonce, in hex characters; each read holds back one fewer characters than
 * this, so a nonce split across reads is still recognised.
 */
const NONCE_CHARS = 32;

interface Running {
  nonce: string;
  token: string;
  maxChars: number;
  head: string;
  dropped: number;
  /** Output not yet passed on: it may be the start of the end marker. */
  pending: string;
  jobPid: number | undefined;
  started: Array<(pid: number) => void>;
  /**
   * The end marker, when it came (on stdout) before the job's pid (on stderr): the two pipes are read in no set
   * order, and the command ends only once its job's group is known, so that what it left running is swept.
   */
  endedEarly: { status: number; cwd: string } | undefined;
  done: (end: { status: number; cwd: string } | Error) => void;
}

export class Shell {
  /** Where the shell is, as of the last command's end. */
  cwd: string;
  private readonly decoder = new StringDecoder("utf8");
  private running: Running | undefined;
  private turn: Promise<unknown> = Promise.resolve();
  private ended: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private controlLine = "";
  /**
   * The process group of every command whose group may still have members: what a command leaves in the background
   * stays in its group, and one that cleared its environment (`env -i cmd &`) carries no token, so only its group
   * finds it. Watched by the watchdog too; dropped once the group is gone, before the kernel may reuse its id.
   */
  private readonly jobs = new Set<ProcessTree>();

  private constructor(
    private readonly process: GroupProcess,
    private readonly dir: string,
    private readonly options: ShellOptions,
  ) {
    this.cwd = options.cwd;
    process.stdout.on("data", (chunk: Buffer) => this.onOutput(this.decoder.write(chunk)));
    process.stderr.on("data", (chunk: Buffer) => this.onControl(chunk.toString("utf8")));
    void process.exited.then(async (exit) => {
      this.ended = exit;
      this.running?.done(
        new GaggleError("EXECUTION_ERROR", `the shell ended (${describeExit(exit)}) while the command ran; the next command starts a new shell`),
      );
      await this.endJobs();
      await this.removeFolder();
    });
  }

  static async start(options: ShellOptions): Promise<Shell> {
    // mkdtemp makes it 0700: it holds `declare -p` of the session's variables, secrets included.
    let dir: string;
    try {
      dir = await mkdtemp(join(tmpdir(), "gaggle-shell-"));
    } catch (error) {
      throw new GaggleError(
        "SERVER_FAILED",
        `the workspace child could not make the shell's folder: ${outOfDescriptors(error) ?? errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
    watchFolder(dir);
    let process: GroupProcess;
    try {
      process = await GroupProcess.start({
        command: "bash",
        args: ["--noprofile", "--norc"],
        cwd: options.cwd,
        env: childEnv({ PAGER: "cat", GIT_PAGER: "cat", GIT_TERMINAL_PROMPT: "0" }, true),
        stdin: "pipe",
        graceMs: options.graceMs,
      });
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      unwatchFolder(dir);
      const descriptors = outOfDescriptors(error);
      if (descriptors) throw new GaggleError("SERVER_FAILED", `the workspace child could not start bash: ${descriptors}`, { cause: error });
      throw new GaggleError("SERVER_FAILED", `the workspace child could not start bash: ${errorMessage(error)}`, {
        hint: "install bash, or put it on the PATH gaggle runs with",
        cause: error,
      });
    }
    process.stdin!.write(shellSetup(dir));
    return new Shell(process, dir, options);
  }

  /** False once bash has exited: a new shell is needed. */
  get alive(): boolean {
    return this.ended === undefined;
  }

  /** Runs `command` after the commands before it; past `timeoutMs`, or when cancelled, the command's group is killed. */
  run(command: string, limits: { timeoutMs: number; maxChars: number; cancel?: Cancellation | undefined }): Promise<CommandRun> {
    const run = this.turn.then(() => this.runNow(command, limits));
    this.turn = run.catch(() => {});
    return run;
  }

  /** Ends the shell and everything its commands started, and removes its folder. */
  async stop(): Promise<void> {
    await Promise.all([this.process.stop(), this.endJobs()]);
    await this.removeFolder();
  }

  /** Every command's group that still has members, ended as a command past its time is. */
  private async endJobs(): Promise<void> {
    const jobs = [...this.jobs];
    this.jobs.clear();
    await Promise.all(
      jobs.map(async (job) => {
        await terminateTree(job, this.options.graceMs);
        unwatchTree(job);
      }),
    );
  }

  /** Forgets the commands' groups that have no member left. */
  private dropEndedJobs(): void {
    for (const job of this.jobs) {
      if (!groupGone(job.pgid)) continue;
      this.jobs.delete(job);
      unwatchTree(job);
    }
  }

  private async removeFolder(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
    unwatchFolder(this.dir);
  }

  private async runNow(command: string, limits: { timeoutMs: number; maxChars: number; cancel?: Cancellation | undefined }): Promise<CommandRun> {
    if (!this.alive) throw shellEnded();
    if (limits.cancel?.aborted) throw cancelledError(limits.cancel.reason);
    const nonce = randomBytes(NONCE_CHARS / 2).toString("hex");
    const token = randomBytes(16).toString("hex");
    try {
      await writeFile(join(this.dir, "command"), command);
    } catch (error) {
      // The shell ended meanwhile, and its folder went with it.
      if (!this.alive) throw shellEnded();
      throw error;
    }
    // Checked again: the shell may have ended, or the call been cancelled, while the command was written.
    if (!this.alive) throw shellEnded();
    if (limits.cancel?.aborted) throw cancelledError(limits.cancel.reason);
    const ended = new Promise<{ status: number; cwd: string } | Error>((resolve) => {
      this.running = {
        nonce,
        token,
        maxChars: limits.maxChars,
        head: "",
        dropped: 0,
        pending: "",
        jobPid: undefined,
        started: [],
        endedEarly: undefined,
        done: resolve,
      };
    });
    const running = this.running!;
    let stopped: CommandRun["stopped"];
    let processes: number | undefined;
    const stop = (why: "timeout" | "cancelled") => {
      if (stopped) return;
      stopped = why;
      void this.killJob(running, token);
    };
    // Past the cap, every job of the session ends: what earlier commands left running counts toward it too.
    const overCap = (): boolean => {
      const count = countTrees([...this.jobs]) ?? 0;
      if (stopped || count <= this.options.maxProcesses) return false;
      stopped = "processes";
      processes = count;
      void this.killJob(running, token);
      return true;
    };
    const timer = setTimeout(() => stop("timeout"), limits.timeoutMs);
    let ending: Promise<void> | undefined;
    const counting = setInterval(() => {
      if (overCap()) ending = this.endJobs();
    }, COUNT_EVERY_MS);
    const unlisten = limits.cancel?.onAbort(() => stop("cancelled"));
    try {
      this.process.stdin!.write(runLine(nonce, token));
      const end = await ended;
      clearInterval(counting);
      if (end instanceof Error && !stopped) throw end;
      if (!(end instanceof Error)) this.cwd = end.cwd;
      // A command that ended leaving too many behind (`cmd &` in a loop) is caught as it ends.
      if (overCap()) ending = this.endJobs();
      await ending;
      const status = end instanceof Error ? undefined : end.status;
      return { output: running.head, dropped: running.dropped, status, ...(stopped && { stopped }), ...(processes !== undefined && { processes }) };
    } finally {
      clearTimeout(timer);
      clearInterval(counting);
      unlisten?.();
      this.running = undefined;
      this.dropEndedJobs();
    }
  }

  /** Kills the job's group and whatever carries its token; a shell that does not come back after it is ended. */
  private async killJob(running: Running, token: string): Promise<void> {
    const quiet = setTimeout(() => {
      if (this.running === running) void this.stop();
    }, this.options.graceMs + AFTER_KILL_MS);
    quiet.unref();
    const pid = running.jobPid ?? (await new Promise<number>((resolve) => running.started.push(resolve)));
    await terminateTree({ pgid: pid, token }, this.options.graceMs);
  }

  private onOutput(text: string): void {
    const running = this.running;
    // What arrives between commands (a background job's late output) belongs to no command.
    if (!running) return;
    const buffer = running.pending + text;
    const at = buffer.indexOf(running.nonce);
    if (at === -1) {
      const keep = Math.max(0, buffer.length - (NONCE_CHARS - 1));
      this.pass(running, buffer.slice(0, keep));
      running.pending = buffer.slice(keep);
      return;
    }
    const end = buffer.indexOf("\0", at);
    if (end === -1) {
      this.pass(running, buffer.slice(0, at));
      running.pending = buffer.slice(at);
      return;
    }
    this.pass(running, buffer.slice(0, at));
    running.pending = "";
    const marker = buffer.slice(at + running.nonce.length + 1, end);
    const space = marker.indexOf(" ");
    const ended = { status: Number(marker.slice(0, space)), cwd: marker.slice(space + 1) };
    if (running.jobPid === undefined) running.endedEarly = ended;
    else running.done(ended);
  }

  private pass(running: Running, text: string): void {
    const room = running.maxChars - running.head.length;
    if (text.length <= room) running.head += text;
    else {
      running.head += text.slice(0, Math.max(0, room));
      running.dropped += text.length - Math.max(0, room);
    }
  }

  /** The shell's stderr carries only its own lines: each job's pid as it starts, and bash's job notices. */
  private onControl(text: string): void {
    const lines = (this.controlLine + text).split("\n");
    this.controlLine = lines.pop() ?? "";
    const running = this.running;
    if (!running) return;
    for (const line of lines) {
      const match = /^([0-9a-f]+) started (\d+)$/.exec(line);
      if (match?.[1] !== running.nonce) continue;
      running.jobPid = Number(match[2]);
      const job = { pgid: running.jobPid, token: running.token };
      this.jobs.add(job);
      watchTree(job);
      for (const resolve of running.started.splice(0)) resolve(running.jobPid);
      if (running.endedEarly) running.done(running.endedEarly);
    }
  }
}

function shellEnded(): GaggleError {
  return new GaggleError("EXECUTION_ERROR", "the shell has ended; the next command starts a new shell");
}

function describeExit(exit: { code: number | null; signal: NodeJS.Signals | null }): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit status ${exit.code}`;
}
