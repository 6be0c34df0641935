// One configured agent's processes, one per principal: each serves that principal's sessions of the agent, started
// with the first and stopped with the last. Principals never share one, so that what an agent keeps per process
// (remembered permission choices, caches, its working state) and its crashes stay with one person.
import type { AgentConfig } from "../../config/agents.js";
import { errorMessage } from "../../shared/errors.js";
import type { Logger } from "../../shared/log.js";
import { AgentProcess, type AgentLaunch } from "./agent-process.js";

/** Told when a principal's process of an agent ends on its own: that principal's live sessions of it lose it. */
export interface ProcessLoss {
  processLost(config: AgentConfig, owner: string, why: string): void;
}

/** One principal's process, from its start until it is stopped or seen to end. */
interface RunningAgent {
  process: Promise<AgentProcess>;
  /** Aborted to stop the process `process` resolves to, even while it has not answered `initialize` yet. */
  stop: AbortController;
}

export class AgentProcesses {
  private readonly running = new Map<string, RunningAgent>();

  constructor(
    private readonly config: AgentConfig,
    private readonly launch: AgentLaunch,
    private readonly loss: ProcessLoss,
    private readonly log: Logger,
  ) {}

  /** The process serving `owner`'s sessions, started if none runs. */
  of(owner: string): Promise<AgentProcess> {
    const found = this.running.get(owner);
    if (found) return found.process;
    const stop = new AbortController();
    const starting = AgentProcess.start(this.launch, stop.signal);
    const running: RunningAgent = { process: starting, stop };
    this.running.set(owner, running);
    const about = { agent: this.config.name, principal: owner };
    starting.then(
      (process) => {
        this.log.info({ ...about, pid: process.pid, agent_info: process.agentInfo }, "agent process started");
        void process.exited.then((exit) => this.ended(owner, running, process, exit.code, exit.signal));
      },
      (error: unknown) => {
        if (this.running.get(owner) === running) this.running.delete(owner);
        this.log.warn({ ...about, err: errorMessage(error) }, "agent process did not start");
      },
    );
    return starting;
  }

  /** Stops `owner`'s process, if one runs; forgotten first, so that a session the principal starts meanwhile gets a new one. */
  async stop(owner: string): Promise<void> {
    const running = this.running.get(owner);
    if (!running) return;
    this.running.delete(owner);
    running.stop.abort();
    const process = await running.process.catch(() => undefined);
    await process?.stop();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.running.keys()].map((owner) => this.stop(owner)));
  }

  /** `owner`'s process ended: if on its own, the principal's sessions are told. */
  private ended(owner: string, running: RunningAgent, process: AgentProcess, code: number | null, signal: NodeJS.Signals | null): void {
    this.log.info({ agent: this.config.name, principal: owner, pid: process.pid, code, signal }, "agent process ended");
    // A process gaggle stopped (its principal's last session released, the agent's table edited) is forgotten
    // already: a session started since runs in a new process.
    if (this.running.get(owner) !== running) return;
    this.running.delete(owner);
    this.loss.processLost(this.config, owner, process.ending ?? (signal ? `signal ${signal}` : `exit code ${code}`));
  }
}
