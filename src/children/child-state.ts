// The states a real child's session goes through, the only transitions between them, and the lock that orders starts and stops.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ChildKind, ChildState, ChildStatus, StdoutNoiseView } from "./child.js";
import type { Session } from "./child-session.js";

/**
 * A state and what holds only in it: a session (and when it started) exists while running and while being stopped; the count of
 * starts that failed in a row travels through `starting` into `failed`, where it sets when the next start
 * may be tried.
 */
export type Phase =
  | { state: "not_started" }
  | { state: "starting"; failedStarts: number }
  | { state: "running"; session: Session; startedAt: Date }
  | { state: "stopping"; session: Session; startedAt: Date }
  | { state: "stopped" }
  | { state: "failed"; failedStarts: number; retryAt: number };

/**
 * Every transition there is. A start is tried from any state without a session (once the back-off after
 * failed starts has passed); a running session ends on purpose (stopping) or by itself (failed); closing a
 * failed child leaves it stopped. Closing a child that was never started, or is stopped, changes nothing.
 */
const TRANSITIONS: Record<ChildState, readonly ChildState[]> = {
  not_started: ["starting"],
  starting: ["running", "failed"],
  running: ["stopping", "failed"],
  stopping: ["stopped"],
  stopped: ["starting"],
  failed: ["starting", "stopped"],
};

export class ChildStateMachine {
  private current: Phase = { state: "not_started" };

  constructor(private readonly child: string) {}

  get phase(): Phase {
    return this.current;
  }

  get state(): ChildState {
    return this.current.state;
  }

  /** The session, in the one state that serves calls. */
  get running(): Session | undefined {
    return this.current.state === "running" ? this.current.session : undefined;
  }

  /** Moves to `next`; a transition the table does not list is a bug in gaggle, and throws. */
  move(next: Phase): void {
    if (!TRANSITIONS[this.current.state].includes(next.state)) {
      throw new Error(`${this.child}: no transition from ${this.current.state} to ${next.state}`);
    }
    this.current = next;
  }
}

/** Runs operations one at a time, in the order they were asked for: a start and a stop never overlap. */
export class OperationLock {
  private last: Promise<unknown> = Promise.resolve();

  run<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.last.then(operation);
    this.last = result.catch(() => {});
    return result;
  }
}

/** What a child in `phase` says of itself; what the machine does not hold, the child gives in `parts`. */
export function statusIn(
  phase: Phase,
  kind: ChildKind,
  parts: {
    visibleTools(tools: Tool[]): number;
    restarts: number;
    lastError: string | null;
    authFailed: boolean;
    stderrTail: string[];
    stdoutNoise: StdoutNoiseView;
  },
): ChildStatus {
  const live = phase.state === "running" || phase.state === "stopping" ? phase : undefined;
  const tools = live?.session.cache.cachedTools;
  return {
    toolCount: tools ? parts.visibleTools(tools) : null,
    state: phase.state,
    kind,
    pid: live?.session.process?.pid ?? null,
    startedAt: live?.startedAt ?? null,
    restarts: parts.restarts,
    lastError: parts.lastError,
    needsAuth: phase.state === "failed" && parts.authFailed,
    stderrTail: parts.stderrTail,
    stdoutNoise: parts.stdoutNoise,
    protocol: live?.session.era.version ?? null,
  };
}
