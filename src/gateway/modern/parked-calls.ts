// The calls waiting for their modern clients to answer an input_required result, by the requestState gaggle issued.
import { randomBytes } from "node:crypto";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { systemClock, type Clock } from "../../shared/clock.js";
import { WireError } from "../../shared/errors.js";

/** What a retry must match to resume a call: the same request, from the same principal and client. */
export interface CallBinding {
  /** "tools/call", "prompts/get" or "resources/read". */
  method: string;
  /** The tool's or prompt's name, or the resource's URI; for execute_child_tool, the child and its tool too. */
  target: string;
  /** Who asked: the principal its token (or member path) names. */
  principal: string;
  /** The client's name and, on a team member's path, the member. */
  client: string;
}

export interface ParkedCallsOptions {
  /** How long a call waits for its client's retry before it is cancelled. */
  ttlMs: number;
  /** How many calls may wait at once; past that a new question fails its call. */
  max: number;
  clock?: Clock;
}

/** What can be parked: a call that can be given up if its client never comes back. */
export interface Abandonable {
  abandon(reason: Error): void;
}

interface Parked<T> {
  call: T;
  binding: CallBinding;
  expire: () => void;
}

/** gaggle's requestStates start with this, so that a child's own can be told apart from them. */
const PREFIX = "gaggle1.";

/**
 * A requestState is 32 random bytes: it cannot be guessed, it is good for one retry only, it expires, and it
 * resumes only the request it was issued for, from the client it was issued to.
 */
export class ParkedCalls<T extends Abandonable> {
  private readonly parked = new Map<string, Parked<T>>();
  private readonly clock: Clock;

  constructor(private readonly options: ParkedCallsOptions) {
    this.clock = options.clock ?? systemClock;
  }

  get size(): number {
    return this.parked.size;
  }

  /** Parks `call` until its client retries; returns the requestState that resumes it. */
  park(call: T, binding: CallBinding): string {
    if (this.parked.size >= this.options.max) {
      const error = new WireError(
        ErrorCode.InternalError,
        `gaggle already holds ${this.options.max} calls waiting for their clients' input; answer or abandon those first`,
      );
      call.abandon(error);
      throw error;
    }
    const state = PREFIX + randomBytes(32).toString("base64url");
    const expire = this.clock.after(this.options.ttlMs, () => {
      this.parked.delete(state);
      call.abandon(new Error(`the client did not answer the input request within ${this.options.ttlMs}ms`));
    });
    this.parked.set(state, { call, binding, expire });
    return state;
  }

  /** Takes the call `state` resumes; -32602 when the state is unknown, used, expired, or was issued for another request. */
  take(state: string, binding: CallBinding): T {
    const parked = this.parked.get(state);
    if (parked === undefined) {
      throw invalidState("requestState is unknown, expired or already used; send the request again without it to start over");
    }
    const issued = parked.binding;
    if (
      issued.method !== binding.method ||
      issued.target !== binding.target ||
      issued.principal !== binding.principal ||
      issued.client !== binding.client
    ) {
      throw invalidState(`requestState was issued for ${issued.method} ${issued.target}, not for this request`);
    }
    this.parked.delete(state);
    parked.expire();
    return parked.call;
  }

  /** Cancels every parked call, as when gaggle shuts down. */
  abandonAll(reason: Error): void {
    for (const [state, parked] of [...this.parked]) {
      this.parked.delete(state);
      parked.expire();
      parked.call.abandon(reason);
    }
  }
}

/** Whether gaggle issued `state`: its retry resumes a call parked here; any other goes to the child with the call. */
export function issuedByGaggle(state: unknown): state is string {
  return typeof state === "string" && state.startsWith(PREFIX);
}

function invalidState(message: string): WireError {
  return new WireError(ErrorCode.InvalidParams, message, { reason: "invalid_request_state" });
}
