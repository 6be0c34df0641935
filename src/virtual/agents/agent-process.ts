// One process of an agent, spoken to over the Agent Client Protocol on its stdio: it serves one principal's sessions of
// that agent for as long as one lives. gaggle is its ACP client; each request the agent makes of a session goes to that session.
import { Readable, Writable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import type * as acp from "@agentclientprotocol/sdk";
import { acpLoaded, loadAcp } from "./acp-sdk.js";
import { GroupProcess, type ProcessExit } from "../../children/processes/group-process.js";
import { StderrRing } from "../../children/processes/stderr-ring.js";
import { GaggleError, errorMessage } from "../../shared/errors.js";
import { GAGGLE_VERSION } from "../../shared/version.js";

/** What gaggle answers for one session: the agent's requests and notifications that name it. */
export interface AcpClientSide {
  update(update: acp.SessionUpdate): void;
  requestPermission(request: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse>;
  readTextFile(request: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse>;
  writeTextFile(request: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse>;
  createTerminal(request: acp.CreateTerminalRequest): Promise<acp.CreateTerminalResponse>;
  terminalOutput(request: acp.TerminalOutputRequest): Promise<acp.TerminalOutputResponse>;
  waitForTerminalExit(request: acp.WaitForTerminalExitRequest, signal: AbortSignal): Promise<acp.WaitForTerminalExitResponse>;
  killTerminal(request: acp.KillTerminalRequest): Promise<acp.KillTerminalResponse>;
  releaseTerminal(request: acp.ReleaseTerminalRequest): Promise<acp.ReleaseTerminalResponse>;
}

export interface AgentLaunch {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  graceMs: number;
  /** Whether gaggle offers fs/read_text_file and fs/write_text_file. */
  files: boolean;
  /** Whether gaggle offers terminal/* (a process child is there to run them). */
  terminals: boolean;
}

/** How long a request that failed as the agent's output closed waits for the process's exit, to say how it ended. */
const EXIT_WAIT_MS = 1000;
/** How long the agent gets to answer `initialize`. */
const INITIALIZE_MS = 60_000;
/** Updates for a session not attached yet (sent right after session/new answered) wait here, this many at most... */
const EARLY_UPDATES = 200;
/** ...for at most this many sessions; updates for sessions gaggle released are dropped past it. */
const EARLY_SESSIONS = 16;

export class AgentProcess {
  readonly capabilities: acp.AgentCapabilities;
  readonly agentInfo: acp.Implementation | undefined;
  /** The leader exited: every session it served has lost its conversation unless the agent can load it again. */
  readonly exited: Promise<ProcessExit>;
  private readonly sessions = new Map<string, AcpClientSide>();
  private readonly early = new Map<string, acp.SessionUpdate[]>();
  private stopping = false;

  private constructor(
    private readonly name: string,
    private readonly process: GroupProcess,
    private readonly connection: acp.ClientConnection,
    private readonly stderr: StderrRing,
    initialized: acp.InitializeResponse,
  ) {
    this.capabilities = initialized.agentCapabilities ?? {};
    this.agentInfo = initialized.agentInfo ?? undefined;
    this.exited = process.exited;
  }

  /**
   * Starts the agent and initializes the connection; rejects with what went wrong, the agent's stderr tail included.
   * `stop` aborted before the agent has answered `initialize` stops its process group and rejects at once.
   */
  static async start(launch: AgentLaunch, stop: AbortSignal = new AbortController().signal): Promise<AgentProcess> {
    const sdk = await loadAcp();
    let process: GroupProcess;
    try {
      process = await GroupProcess.start({
        command: launch.command,
        args: launch.args,
        cwd: launch.cwd,
        env: launch.env,
        stdin: "pipe",
        graceMs: launch.graceMs,
      });
    } catch (error) {
      throw new GaggleError("SERVER_FAILED", `agent "${launch.name}" could not be started (${launch.command}): ${errorMessage(error)}`, {
        hint: `check [agents.${launch.name}] command and cwd`,
        cause: error,
      });
    }
    const stderr = new StderrRing();
    process.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
    // The handlers find their session through `holder`, filled in once the process object exists.
    const holder: { agent?: AgentProcess } = {};
    const side = (sessionId: string): AcpClientSide => {
      const found = holder.agent?.sessions.get(sessionId);
      if (!found) throw sdk.RequestError.resourceNotFound(`session ${sessionId}`);
      return found;
    };
    const app = sdk
      .client({ name: "gaggle" })
      .onNotification("session/update", ({ params }) => holder.agent?.deliver(params.sessionId, params.update))
      .onRequest("session/request_permission", ({ params, signal }) => side(params.sessionId).requestPermission(params, signal))
      .onRequest("fs/read_text_file", ({ params }) => answer(() => side(params.sessionId).readTextFile(params)))
      .onRequest("fs/write_text_file", ({ params }) => answer(() => side(params.sessionId).writeTextFile(params)))
      .onRequest("terminal/create", ({ params }) => answer(() => side(params.sessionId).createTerminal(params)))
      .onRequest("terminal/output", ({ params }) => answer(() => side(params.sessionId).terminalOutput(params)))
      .onRequest("terminal/wait_for_exit", ({ params, signal }) => answer(() => side(params.sessionId).waitForTerminalExit(params, signal)))
      .onRequest("terminal/kill", ({ params }) => answer(() => side(params.sessionId).killTerminal(params)))
      .onRequest("terminal/release", ({ params }) => answer(() => side(params.sessionId).releaseTerminal(params)));
    const stream = sdk.ndJsonStream(
      Writable.toWeb(process.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(process.stdout) as ReadableStream<Uint8Array>,
    );
    const connection = app.connect(stream);
    void process.exited.then(() => connection.close());
    const timeout = AbortSignal.timeout(INITIALIZE_MS);
    try {
      const initialized = await connection.agent.request(
        "initialize",
        {
          protocolVersion: sdk.PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: launch.files, writeTextFile: launch.files }, terminal: launch.terminals },
          clientInfo: { name: "gaggle", version: GAGGLE_VERSION },
        },
        { cancellationSignal: AbortSignal.any([timeout, connection.signal, stop]), stopWaitingOnCancel: true },
      );
      holder.agent = new AgentProcess(launch.name, process, connection, stderr, initialized);
      return holder.agent;
    } catch (error) {
      // Read before stopping it: the connection closed by itself when the agent's output ended, as it exited.
      const ended = connection.signal.aborted && !timeout.aborted && !stop.aborted;
      const exit = await process.stop();
      const why = ended
        ? `it exited (${exit.code !== null ? `code ${exit.code}` : exit.signal}) before answering initialize`
        : timeout.aborted
          ? `it did not answer initialize within ${INITIALIZE_MS / 1000} s`
          : stop.aborted
            ? "it was stopped before it answered initialize (its last session was released, or gaggle shut down)"
            : errorMessage(error);
      const tail = stderr.tail(5).join("\n");
      throw new GaggleError("SERVER_FAILED", `agent "${launch.name}" did not initialize over ACP: ${why}${tail ? `\nits stderr:\n${tail}` : ""}`, {
        hint: `check that [agents.${launch.name}] command speaks the Agent Client Protocol on stdio (some agents need a flag such as --acp)`,
        cause: error,
      });
    }
  }

  get pid(): number {
    return this.process.pid;
  }

  get alive(): boolean {
    return this.process.exitInfo === undefined && !this.stopping;
  }

  stderrTail(count: number): string[] {
    return this.stderr.tail(count);
  }

  /** How the process ended ("exit code 3", "signal SIGKILL") and the last lines of its stderr; undefined while it runs. */
  get ending(): string | undefined {
    const exit = this.process.exitInfo;
    if (!exit) return undefined;
    const why = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    const tail = this.stderr.tail(3).join(" | ");
    return tail ? `${why}; stderr: ${tail}` : why;
  }

  /** Those of `servers` the agent takes: a stdio one from any, an HTTP or SSE one only where it declares it (mcpCapabilities). */
  takes(servers: acp.McpServer[]): acp.McpServer[] {
    const offered = this.capabilities.mcpCapabilities;
    return servers.filter((server) => !("type" in server) || (server.type === "http" ? offered?.http : offered?.sse) === true);
  }

  /** The agent's requests and updates for `sessionId` go to `side` from now on (updates that came early first). */
  attach(sessionId: string, side: AcpClientSide): void {
    this.sessions.set(sessionId, side);
    const waiting = this.early.get(sessionId) ?? [];
    this.early.delete(sessionId);
    for (const update of waiting) side.update(update);
  }

  private detach(sessionId: string): void {
    this.sessions.delete(sessionId);
    this.early.delete(sessionId);
  }

  /**
   * Detaches `sessionId` and, where the agent offers `session/close`, has it end its side of the session (the
   * processes and background work it keeps for it) now rather than when its process ends with its last session.
   * Its answer is not awaited: a failure leaves only what the process's end sweeps.
   */
  close(sessionId: string): void {
    this.detach(sessionId);
    if (!this.capabilities.sessionCapabilities?.close) return;
    void this.connection.agent.request("session/close", { sessionId }).catch(() => {});
  }

  get attached(): number {
    return this.sessions.size;
  }

  async newSession(cwd: string, roots: string[], mcpServers: acp.McpServer[] = []): Promise<string> {
    const extra = roots.filter((root) => root !== cwd);
    const params: acp.NewSessionRequest = { cwd, mcpServers, ...(extra.length > 0 && { additionalDirectories: extra }) };
    const made = await this.request("before it answered session/new", () => this.connection.agent.request("session/new", params));
    return made.sessionId;
  }

  /** Resumes `sessionId` in this process; the agent replays the conversation as updates, which reach `side`. */
  async loadSession(sessionId: string, cwd: string, side: AcpClientSide, mcpServers: acp.McpServer[] = []): Promise<void> {
    this.attach(sessionId, side);
    await this.request("before it answered session/load", () => this.connection.agent.request("session/load", { sessionId, cwd, mcpServers }));
  }

  prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    return this.request("during the turn", () => this.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }));
  }

  /** `run`'s answer; when the agent's process ends under it, a rejection saying how it ended rather than that the connection closed. */
  private async request<T>(when: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (this.stopping || !this.connection.signal.aborted) throw error;
      // The output can close a moment before the exit is seen.
      await Promise.race([this.process.exited, delay(EXIT_WAIT_MS)]);
      throw new GaggleError("SERVER_FAILED", `agent "${this.name}"'s process ended ${when} (${this.ending ?? "it closed its output"})`, {
        cause: error,
      });
    }
  }

  cancel(sessionId: string): void {
    void this.connection.agent.notify("session/cancel", { sessionId }).catch(() => {});
  }

  /** Closes its stdin, then stops its whole process group; resolves once it is gone. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.connection.close();
    await this.process.closeGently(this.process.exitInfo ? 0 : 1000);
  }

  private deliver(sessionId: string, update: acp.SessionUpdate): void {
    const side = this.sessions.get(sessionId);
    if (side) return side.update(update);
    const waiting = this.early.get(sessionId);
    if (waiting) {
      if (waiting.length < EARLY_UPDATES) waiting.push(update);
    } else if (this.early.size < EARLY_SESSIONS) this.early.set(sessionId, [update]);
  }
}

/** A refusal or failure gaggle reports to the agent as a JSON-RPC error carrying gaggle's own words. */
async function answer<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const { RequestError } = acpLoaded();
    if (error instanceof RequestError) throw error;
    const hint = error instanceof GaggleError && error.hint ? ` (${error.hint})` : "";
    throw new RequestError(-32603, `${errorMessage(error)}${hint}`, error instanceof GaggleError ? { code: error.code } : undefined);
  }
}
