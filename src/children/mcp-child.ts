// A real MCP server as a child: one pooled session, a state machine around it, a call queue, a schema cache.
import PQueue from "p-queue";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolResultSchema, ErrorCode, McpError, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ChildConfig } from "../config/index.js";
import { GaggleError, errorMessage } from "../errors.js";
import { logger, type Logger } from "../log.js";
import { GAGGLE_NAME, GAGGLE_VERSION } from "../version.js";
import { backoffMs } from "./backoff.js";
import { callFailure, stderrSuffix } from "./call-failure.js";
import type { CallContext, Child, ChildSchema, ChildState, ChildStatus } from "./child.js";
import { childEnv } from "./child-env.js";
import { remoteTransport } from "./remote-transport.js";
import { SchemaCache } from "./schema-cache.js";
import { OrderedTransport } from "./ordered-transport.js";
import { StderrRing } from "./stderr-ring.js";
import { ProcessGroupTransport, type ProcessExit } from "./stdio-transport.js";
import { toolFilter } from "./tool-filter.js";

export interface McpChildOptions {
  /** Time a stdio child gets after SIGTERM before its process group is killed. */
  shutdownGraceMs: number;
}

/** One live connection to the child; replaced as a whole when the child restarts. */
interface Session {
  client: Client;
  transport: Transport;
  /** The process behind a stdio child; undefined for remote children. */
  process: ProcessGroupTransport | undefined;
  cache: SchemaCache;
  startedAt: Date;
}

export class McpChild implements Child {
  readonly name: string;
  readonly kind: ChildConfig["transport"];
  readonly description: string | undefined;

  private state: ChildState = "not_started";
  private session: Session | undefined;
  /** The one start in progress: concurrent first calls share it. */
  private starting: Promise<Session> | undefined;
  private stopping: Promise<void> | undefined;
  private readonly queue: PQueue;
  private readonly stderr = new StderrRing();
  private readonly visible: (tool: string) => boolean;
  private readonly log: Logger;
  private idleTimer: NodeJS.Timeout | undefined;
  private starts = 0;
  private failedStarts = 0;
  private retryAt = 0;
  private lastError: string | undefined;
  private endedBecause: string | undefined;
  private callsServed = 0;

  constructor(
    private readonly config: ChildConfig,
    private readonly options: McpChildOptions,
  ) {
    this.name = config.name;
    this.kind = config.transport;
    this.description = config.description;
    this.visible = toolFilter(config.tools);
    this.log = logger({ child: config.name });
    this.queue = new PQueue({ concurrency: config.concurrency });
    if (config.idleTimeoutMs > 0) {
      this.queue.on("active", () => clearTimeout(this.idleTimer));
      this.queue.on("idle", () => this.armIdleTimer());
    }
  }

  status(): ChildStatus {
    const session = this.session;
    return {
      state: this.state,
      kind: this.kind,
      pid: session ? (this.pidOf(session) ?? null) : null,
      startedAt: session?.startedAt ?? null,
      restarts: Math.max(0, this.starts - 1),
      lastError: this.lastError ?? null,
      stderrTail: this.stderr.tail(),
      callsServed: this.callsServed,
      queue: { running: this.queue.pending, waiting: this.queue.size },
      toolCount: session?.cache.cachedTools?.filter((tool) => this.visible(tool.name)).length ?? null,
    };
  }

  async start(): Promise<void> {
    await this.ensureSession();
  }

  async tools(): Promise<Tool[]> {
    const session = await this.ensureSession();
    const tools = await this.request(session, "tools/list", () => session.cache.tools());
    return tools.filter((tool) => this.visible(tool.name));
  }

  async schema(): Promise<ChildSchema> {
    const session = await this.ensureSession();
    const lists = await this.request(session, "the schema lists", () => session.cache.all());
    return { ...lists, tools: lists.tools.filter((tool) => this.visible(tool.name)) };
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    return this.queue.add(
      async () => {
        // Started inside the queue: a child that died while this call waited is restarted for it.
        const session = await this.ensureSession();
        try {
          return await this.request(session, `tool "${name}"`, () =>
            session.client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, {
              timeout: this.config.timeoutMs,
              resetTimeoutOnProgress: true,
              maxTotalTimeout: this.config.maxTimeoutMs,
              ...(ctx.signal && { signal: ctx.signal }),
              ...(ctx.onprogress && { onprogress: ctx.onprogress }),
            }),
          );
        } finally {
          this.callsServed++;
        }
      },
      { ...(ctx.signal && { signal: ctx.signal }) },
    );
  }

  async close(): Promise<{ uptimeMs: number | null }> {
    clearTimeout(this.idleTimer);
    await this.starting?.catch(() => {});
    const session = this.session;
    // An explicit close also forgets past failures: the next call gets a fresh start without waiting.
    this.failedStarts = 0;
    this.retryAt = 0;
    if (!session) {
      await this.stopping;
      if (this.state !== "not_started") this.state = "stopped";
      return { uptimeMs: null };
    }
    const uptimeMs = Date.now() - session.startedAt.getTime();
    this.state = "stopping";
    this.stopping = this.endSession(session).finally(() => {
      this.stopping = undefined;
    });
    await this.stopping;
    this.state = "stopped";
    this.log.info({ uptimeMs }, "session closed");
    return { uptimeMs };
  }

  private async ensureSession(): Promise<Session> {
    if (this.session) return this.session;
    if (this.starting) return this.starting;
    await this.stopping;
    if (this.session) return this.session;
    const wait = this.retryAt - Date.now();
    if (wait > 0) {
      throw new GaggleError(
        "SERVER_FAILED",
        `${this.name} failed to start ${this.failedStarts} time(s) in a row; the next attempt is allowed in ` +
          `${(wait / 1000).toFixed(1)}s. Last error: ${this.lastError ?? "unknown"}`,
        { hint: `fix the cause shown by get_child_status("${this.name}"), or close_child_session to retry at once` },
      );
    }
    this.starting ??= this.startSession().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startSession(): Promise<Session> {
    this.state = "starting";
    this.endedBecause = undefined;
    const raw = this.createTransport();
    const transport = new OrderedTransport(raw);
    const client = new Client({ name: GAGGLE_NAME, version: GAGGLE_VERSION }, { capabilities: {} });
    const session: Session = {
      client,
      transport,
      process: raw instanceof ProcessGroupTransport ? raw : undefined,
      startedAt: new Date(),
      cache: new SchemaCache(client, { timeout: this.config.timeoutMs }, (kind) =>
        this.log.debug({ kind }, "list changed; cache dropped"),
      ),
    };
    client.onclose = () => this.onSessionClosed(session);
    client.onerror = (error) => {
      // Closing a remote session aborts its stream; that is the close itself, not a fault worth a warning.
      if (this.state !== "stopping") this.log.warn({ err: error }, "protocol error from child");
    };
    try {
      await client.connect(transport, { timeout: this.config.startupTimeoutMs });
    } catch (error) {
      await transport.close().catch(() => {});
      throw this.startFailed(error, session);
    }
    session.startedAt = new Date();
    this.session = session;
    this.starts++;
    this.failedStarts = 0;
    this.retryAt = 0;
    this.state = "running";
    this.log.info({ pid: this.pidOf(session), restarts: this.starts - 1 }, "session started");
    this.armIdleTimer();
    return session;
  }

  private startFailed(error: unknown, session: Session): GaggleError {
    this.failedStarts++;
    this.retryAt = Date.now() + backoffMs(this.failedStarts);
    this.state = "failed";
    this.lastError = `failed to start: ${this.startFailureReason(error, session)}`;
    this.log.warn({ reason: this.lastError, failedStarts: this.failedStarts }, "start failed");
    const hint =
      this.kind === "stdio"
        ? `check the command, args and env of ${this.name} in the config; get_child_status shows its stderr`
        : `check the url and headers of ${this.name} in the config, and that the server is up`;
    return new GaggleError("SERVER_FAILED", `${this.name} ${this.lastError}${stderrSuffix(this.stderr.tail())}`, { hint, cause: error });
  }

  /** An exit of the process says most; otherwise the transport's own error, with its HTTP status if it has one. */
  private startFailureReason(error: unknown, session: Session): string {
    const message = errorMessage(error);
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return `did not answer initialize within ${this.config.startupTimeoutMs}ms (startup_timeout_ms)`;
    }
    const exit = session.process?.exitInfo;
    if (exit) return describeExit(exit);
    const status = (error as { code?: unknown }).code;
    return typeof status === "number" && status >= 400 && !message.includes(String(status)) ? `${message} (HTTP ${status})` : message;
  }

  private onSessionClosed(session: Session): void {
    const exit = session.process?.exitInfo;
    this.endedBecause = exit ? describeExit(exit) : "closed its connection";
    if (this.session !== session) return;
    this.session = undefined;
    clearTimeout(this.idleTimer);
    if (this.state === "stopping") return;
    this.state = "failed";
    this.lastError = `${this.endedBecause} unexpectedly`;
    this.log.warn({ reason: this.endedBecause }, "child ended unexpectedly; the next call restarts it");
  }

  /** Runs a request on the session, turning whatever the SDK throws into a GaggleError. */
  private async request<T>(session: Session, what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw callFailure(error, {
        child: this.name,
        what,
        timeoutMs: this.config.timeoutMs,
        queue: { running: this.queue.pending, waiting: this.queue.size },
        endedBecause: this.endedBecause,
        closing: this.state === "stopping" && this.session !== session,
        stderrTail: this.stderr.tail(),
      });
    }
  }

  private async endSession(session: Session): Promise<void> {
    if (this.session === session) this.session = undefined;
    await session.client.close().catch((error: unknown) => this.log.warn({ err: error }, "error while closing"));
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    const ms = this.config.idleTimeoutMs;
    if (ms <= 0 || !this.session || this.queue.pending + this.queue.size > 0) return;
    this.idleTimer = setTimeout(() => {
      this.log.info({ idleMs: ms }, "idle timeout; stopping");
      void this.close();
    }, ms).unref();
  }

  private createTransport(): Transport {
    const config = this.config;
    if (config.transport !== "stdio") return remoteTransport(config.transport, config.url!, config.headers);
    return new ProcessGroupTransport({
      command: config.command!,
      args: config.args,
      cwd: config.cwd,
      env: childEnv(config.env, config.inheritEnv),
      graceMs: this.options.shutdownGraceMs,
      onStderr: (chunk) => {
        for (const line of this.stderr.push(chunk)) this.log.debug({ stream: "stderr" }, line);
      },
      onStdoutGarbage: (line) => {
        this.stderr.push(`[gaggle] ignored a stdout line that is not JSON-RPC: ${line.slice(0, 200)}\n`);
        this.log.warn({ line: line.slice(0, 200) }, "child wrote a line to stdout that is not JSON-RPC; ignored");
      },
    });
  }

  private pidOf(session: Session): number | undefined {
    return session.process?.pid;
  }
}

function describeExit(exit: ProcessExit): string {
  return `exited (${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`})`;
}
