// Owns one session's terminal/* requests: each terminal is a background process of the process child, started for
// the session's principal, under that child's command policy and limits, its working folder inside the session's roots.
import type * as acp from "@agentclientprotocol/sdk";
import { GaggleError } from "../../shared/errors.js";
import { isDirectory } from "../../shared/fs-probes.js";
import { shellWord } from "../../shared/shell-word.js";
import type { ManagedProcess } from "../process/managed-process.js";
import type { ProcessTable } from "../process/process-table.js";
import type { Place } from "../workspace/place.js";

/** Output a terminal/output answer holds when the agent set no limit. */
const DEFAULT_OUTPUT_BYTES = 1024 * 1024;

export interface TerminalOwner {
  principal: string;
  /** The client session told when a terminal's process ends. */
  session: string;
}

export class SessionTerminals {
  private readonly terminals = new Map<string, { process: ManagedProcess; limit: number }>();
  private counter = 0;

  constructor(
    private readonly table: ProcessTable | undefined,
    private readonly owner: TerminalOwner,
  ) {}

  async create(place: Place, request: acp.CreateTerminalRequest): Promise<acp.CreateTerminalResponse> {
    if (!this.table) {
      throw new GaggleError("PERMISSION_DENIED", "gaggle runs no terminals: the process child is disabled", {
        hint: "enable [virtual.process] to let agents run commands",
      });
    }
    const cwd = await place.confine(request.cwd ?? place.cwd);
    if (!(await isDirectory(cwd))) throw new GaggleError("INVALID_ARGS", `cwd "${cwd}" is not a directory`);
    const args = request.args ?? [];
    // A command without arguments may be a whole command line, as some agents send it.
    const command = args.length === 0 ? request.command : [request.command, ...args].map(shellWord).join(" ");
    const env = Object.fromEntries((request.env ?? []).map((variable) => [variable.name, variable.value]));
    const started = await this.table.run({ command, cwd, env }, this.owner);
    const id = `terminal-${++this.counter}`;
    this.terminals.set(id, { process: started, limit: request.outputByteLimit ?? DEFAULT_OUTPUT_BYTES });
    return { terminalId: id };
  }

  async output(request: acp.TerminalOutputRequest): Promise<acp.TerminalOutputResponse> {
    const { process, limit } = this.get(request.terminalId);
    // What is known before the read describes the bytes it reads.
    const { truncated } = process.output;
    const exitStatus = process.running ? undefined : exitOf(process);
    const { output, cut } = await tailOf(process, limit);
    return { output, truncated: cut || truncated, ...(exitStatus && { exitStatus }) };
  }

  async waitForExit(request: acp.WaitForTerminalExitRequest, signal: AbortSignal): Promise<acp.WaitForTerminalExitResponse> {
    const { process } = this.get(request.terminalId);
    await new Promise<void>((resolve) => {
      void process.ended.then(resolve);
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
    return exitOf(process);
  }

  async kill(request: acp.KillTerminalRequest): Promise<acp.KillTerminalResponse> {
    const { process } = this.get(request.terminalId);
    await process.stop("killed");
    return {};
  }

  async release(request: acp.ReleaseTerminalRequest): Promise<acp.ReleaseTerminalResponse> {
    const { process } = this.get(request.terminalId);
    this.terminals.delete(request.terminalId);
    await process.stop("killed");
    return {};
  }

  /** The session ended: its commands still running end with it. */
  async stopAll(): Promise<void> {
    const all = [...this.terminals.values()];
    this.terminals.clear();
    await Promise.allSettled(all.map(({ process }) => process.stop("killed")));
  }

  private get(id: string): { process: ManagedProcess; limit: number } {
    const found = this.terminals.get(id);
    if (found) return found;
    throw new GaggleError("NOT_FOUND", `no terminal "${id}" in this session (released, or never created)`);
  }
}

function exitOf(process: ManagedProcess): acp.TerminalExitStatus {
  return { exitCode: process.exitCode, signal: process.signal };
}

/** The last `limit` bytes of the process's output log, started at a character boundary. */
async function tailOf(process: ManagedProcess, limit: number): Promise<{ output: string; cut: boolean }> {
  const size = process.output.bytes;
  const take = Math.min(size, limit);
  if (take === 0) return { output: "", cut: size > 0 };
  const buffer = Buffer.alloc(take);
  const file = await process.openLog();
  try {
    let read = 0;
    while (read < take) {
      const { bytesRead: got } = await file.read(buffer, read, take - read, size - take + read);
      if (got === 0) break;
      read += got;
    }
    return {
      output: buffer
        .subarray(0, read)
        .toString("utf8")
        .replace(/^\uFFFD+/, ""),
      cut: take < size,
    };
  } finally {
    await file.close();
  }
}
