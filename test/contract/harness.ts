// What the Child contract suite needs of each kind of child, and the parts it builds every child with.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext, Child, ChildSchema, ChildStatus, Turn } from "../../src/children/child.js";
import type { Switchboard } from "../../src/children/switchboard.js";

/** One tool call: the tool and its arguments. */
export interface ToolCall {
  tool: string;
  args: Record<string, unknown>;
}

/** A call that stays at the child a while; each one readied has arguments of its own, so their order can be told. */
export interface SlowCall extends ToolCall {
  /** Set where the child's own side can show it: resolves once the child is working on this call. */
  working?: () => Promise<void>;
}

/** A child under test, built fresh for one test, with what the suite needs to drive and observe it. */
export interface Subject {
  child: Child;
  /** A call that succeeds; its text must match `answers`. */
  good: ToolCall & { answers: RegExp };
  /** A call to a real tool with arguments its input schema refuses. */
  bad: ToolCall;
  /** Readies a call that stays at the child for a second or so (or until it is cancelled, where the subject cancels in flight). */
  slow(): Promise<SlowCall>;
  /**
   * Set for a child whose slow call stops its work when the call is cancelled in flight: resolves once the
   * child's own side shows that it stopped (a fixture's "cancelled" line, a gosling's process gone).
   */
  stopsCancelled?: () => Promise<void>;
  /** Leaves work running at the child that closing it must end: a server process, a session, a background command, an agent's turn. */
  occupy(): Promise<void>;
  /** What the child started that is still alive ("pid 1234", "session 5f2e open"): nothing may be left after close. */
  leftovers(): Promise<string[]>;
  /** Set for real children: ends the child's server abruptly, as a crash would, and brings a new one up for the next call. */
  crash?: { kill(): Promise<void>; recover(): Promise<void> };
  /** Ends what the subject started beside the child (a fixture server, sibling children). */
  dispose(): Promise<void>;
}

export interface ContractSubject {
  title: string;
  /** What close leaves: a real child's session is stopped; a built-in child is always running. */
  stateAfterClose: ChildStatus["state"];
  /** Its slow call stops its work when cancelled in flight; then every Subject it builds has `stopsCancelled`. */
  cancelsInFlight: boolean;
  /** It can crash (a real server); then every Subject it builds has `crash`. */
  crashes: boolean;
  build(switchboard: Switchboard): Promise<Subject>;
}

/**
 * A real child with a count of the calls that reach it: the router's side of the contract (what it lets
 * through, and how many at once) is read here, at the child's door, for every kind of child alike.
 */
export class ObservedChild implements Child {
  /** The calls, in the order they reached the child. */
  readonly reached: ToolCall[] = [];
  active = 0;
  mostAtOnce = 0;

  constructor(private readonly inner: Child) {}

  get name(): string {
    return this.inner.name;
  }

  get description(): string | undefined {
    return this.inner.description;
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext, turn?: Turn): Promise<CallToolResult> {
    this.reached.push({ tool: name, args });
    this.mostAtOnce = Math.max(this.mostAtOnce, ++this.active);
    try {
      return await this.inner.callTool(name, args, ctx, turn);
    } finally {
      this.active--;
    }
  }

  status(): ChildStatus {
    return this.inner.status();
  }
  tools(): Promise<Tool[]> {
    return this.inner.tools();
  }
  knownTool(name: string): Tool | undefined {
    return this.inner.knownTool(name);
  }
  known(): Partial<ChildSchema> {
    return this.inner.known();
  }
  schema(): Promise<ChildSchema> {
    return this.inner.schema();
  }
  readResource(...args: Parameters<Child["readResource"]>) {
    return this.inner.readResource(...args);
  }
  getPrompt(...args: Parameters<Child["getPrompt"]>) {
    return this.inner.getPrompt(...args);
  }
  complete(...args: Parameters<Child["complete"]>) {
    return this.inner.complete(...args);
  }
  subscribe(uri: string): Promise<void> {
    return this.inner.subscribe(uri);
  }
  unsubscribe(uri: string): Promise<void> {
    return this.inner.unsubscribe(uri);
  }
  background() {
    return this.inner.background();
  }
  close(principal?: string): Promise<{ uptimeMs: number | null }> {
    return this.inner.close(principal);
  }
}
