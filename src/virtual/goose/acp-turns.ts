// Owns a gosling's turns over `goose acp`: one Goose process for the gosling's life, one ACP session in it, each
// turn a session/prompt whose updates become the gosling's transcript lines.
import type * as acp from "@agentclientprotocol/sdk";
import { GaggleError, errorMessage } from "../../shared/errors.js";
import { hasFlag, type RunOption } from "../../config/virtual/goose-options.js";
import { AgentProcess, type AcpClientSide } from "../agents/agent-process.js";
import { AcpReader } from "./acp-reader.js";
import type { GooseLaunch, GoslingTurns, RunningTurn, TurnReader, TurnSinks } from "./turns.js";

/** The `goose run` flags `goose acp` can be given for a gosling (and how); a gosling with any other runs over `goose run`. */
const ACP_FLAGS = new Set(["--provider", "--model", "--with-builtin", "--with-streamable-http-extension"]);

/** Whether every one of a gosling's options has its `goose acp` form. */
export function acpCanTake(options: readonly RunOption[]): boolean {
  return options.every((option) => ACP_FLAGS.has(option.flag));
}

export interface AcpTurnsInput {
  launch: GooseLaunch;
  prefixArgs: readonly string[];
  cwd: string;
  /** Only flags acpCanTake accepts. */
  options: readonly RunOption[];
  provider: string | undefined;
  model: string | undefined;
  /** An ACP session an earlier gosling made, continued with session/load. */
  loadFrom: string | undefined;
}

/**
 * The process starts with the first turn and is stopped when the gosling is released; a process that ended on
 * its own is started again on the next turn, which loads the session. `--provider` and `--model` become
 * GOOSE_PROVIDER and GOOSE_MODEL in its environment, `--with-builtin` its own flag, and each
 * `--with-streamable-http-extension` an HTTP MCP server of the session.
 */
export class AcpTurns implements GoslingTurns, AcpClientSide {
  readonly transport = "goose acp";
  conversation: string | undefined;
  private process: Promise<AgentProcess> | undefined;
  /** Aborted to stop the process `process` resolves to, even before it has answered `initialize`. */
  private stopping = new AbortController();
  /** The running turn's reader: updates between turns (a loaded session's replay) are not shown again. */
  private reader: AcpReader | undefined;

  constructor(private readonly input: AcpTurnsInput) {
    this.conversation = input.loadFrom;
  }

  async start(prompt: string, _resume: boolean, sinks: TurnSinks): Promise<{ turn: RunningTurn; reader: TurnReader }> {
    const process = await this.connect();
    const sessionId = this.conversation!;
    const reader = new AcpReader(sinks.transcript);
    this.reader = reader;
    const done = process.prompt(sessionId, prompt).then(
      (response) => reader.ended(response.stopReason),
      (error: unknown) => {
        const tail = process.stderrTail(5);
        for (const line of tail) sinks.stderr(line);
        // A GaggleError of the process says how it ended already.
        const said = process.alive || error instanceof GaggleError;
        reader.failed(said ? errorMessage(error) : `goose acp ended during the turn (${errorMessage(error)})`);
      },
    );
    const ended = done.then(() => {
      if (this.reader === reader) this.reader = undefined;
      return { code: 0, signal: null };
    });
    const stop = async () => {
      process.cancel(sessionId);
      // A turn that does not stop when cancelled ends with its process; the next turn starts another and loads the session.
      const grace = new Promise<"late">((resolve) => setTimeout(() => resolve("late"), this.input.launch.graceMs).unref());
      if ((await Promise.race([ended, grace])) === "late") await this.stopProcess();
      await ended;
    };
    return { turn: { done: ended, stop }, reader };
  }

  close(): Promise<void> {
    return this.stopProcess();
  }

  // ---- what Goose asks of the gosling (AcpClientSide)

  update(update: acp.SessionUpdate): void {
    this.reader?.update(update);
  }

  /** A gosling has nobody to ask: Goose's question is answered with its own reject option, and the transcript says so. */
  async requestPermission(request: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse> {
    const reject =
      request.options.find((option) => option.kind === "reject_once") ?? request.options.find((option) => option.kind === "reject_always");
    this.reader?.note(
      `[confirmation needed] ${request.toolCall.title ?? request.toolCall.toolCallId}: refused, a gosling has nobody to ask (GOOSE_MODE=auto lets Goose go on)`,
    );
    return reject ? { outcome: { outcome: "selected", optionId: reject.optionId } } : { outcome: { outcome: "cancelled" } };
  }

  readTextFile(): Promise<acp.ReadTextFileResponse> {
    return notOffered("fs/read_text_file");
  }
  writeTextFile(): Promise<acp.WriteTextFileResponse> {
    return notOffered("fs/write_text_file");
  }
  createTerminal(): Promise<acp.CreateTerminalResponse> {
    return notOffered("terminal/create");
  }
  terminalOutput(): Promise<acp.TerminalOutputResponse> {
    return notOffered("terminal/output");
  }
  waitForTerminalExit(): Promise<acp.WaitForTerminalExitResponse> {
    return notOffered("terminal/wait_for_exit");
  }
  killTerminal(): Promise<acp.KillTerminalResponse> {
    return notOffered("terminal/kill");
  }
  releaseTerminal(): Promise<acp.ReleaseTerminalResponse> {
    return notOffered("terminal/release");
  }

  // ----

  private connect(): Promise<AgentProcess> {
    if (!this.process) {
      this.stopping = new AbortController();
      const starting = this.open(this.stopping.signal);
      this.process = starting;
      starting.then(
        (process) => void process.exited.then(() => this.forget(starting)),
        () => this.forget(starting),
      );
    }
    return this.process;
  }

  private async open(stop: AbortSignal): Promise<AgentProcess> {
    const { input } = this;
    const provider = value(input.options, "--provider") ?? input.provider;
    const model = value(input.options, "--model") ?? input.model;
    const builtins = input.options.filter((option) => option.flag === "--with-builtin").flatMap((option) => ["--with-builtin", option.value!]);
    const process = await AgentProcess.start(
      {
        name: "goose",
        command: input.launch.command,
        args: [...input.prefixArgs, "acp", ...builtins],
        cwd: input.cwd,
        env: {
          ...input.launch.env,
          ...(provider !== undefined && { GOOSE_PROVIDER: provider }),
          ...(model !== undefined && { GOOSE_MODEL: model }),
        },
        graceMs: input.launch.graceMs,
        files: false,
        terminals: false,
      },
      stop,
    );
    // Stopped while its session is made: the process goes, and the request with it.
    const onStop = () => void process.stop();
    stop.addEventListener("abort", onStop, { once: true });
    try {
      const servers = this.servers(process);
      if (this.conversation === undefined) {
        this.conversation = await process.newSession(input.cwd, [input.cwd], servers);
        process.attach(this.conversation, this);
      } else {
        if (!process.capabilities.loadSession) {
          throw new GaggleError("SESSION_ERROR", `goose acp cannot load sessions, so ACP session ${this.conversation} cannot be continued`);
        }
        await process.loadSession(this.conversation, input.cwd, this, servers);
      }
      return process;
    } catch (error) {
      await process.stop();
      throw error;
    } finally {
      stop.removeEventListener("abort", onStop);
    }
  }

  /** Each --with-streamable-http-extension as an HTTP MCP server, where Goose declares it takes them. */
  private servers(process: AgentProcess): acp.McpServer[] {
    const urls = this.input.options.filter((option) => option.flag === "--with-streamable-http-extension").map((option) => option.value!);
    if (urls.length === 0) return [];
    const servers: acp.McpServer[] = urls.map((url, index) => ({ type: "http", name: `extension-${index + 1}`, url, headers: [] }));
    if (process.takes(servers).length < servers.length) {
      throw new GaggleError(
        "SESSION_ERROR",
        "goose acp takes no HTTP MCP servers (mcpCapabilities.http), and this gosling has --with-streamable-http-extension",
        {
          hint: 'set [virtual.goose] transport = "run"',
        },
      );
    }
    return servers;
  }

  private forget(process: Promise<AgentProcess>): void {
    if (this.process === process) this.process = undefined;
  }

  private async stopProcess(): Promise<void> {
    const running = this.process;
    this.process = undefined;
    this.stopping.abort();
    const process = await running?.catch(() => undefined);
    await process?.stop();
  }
}

function value(options: readonly RunOption[], flag: string): string | undefined {
  return hasFlag(options, flag) ? options.find((option) => option.flag === flag)?.value : undefined;
}

function notOffered(method: string): Promise<never> {
  return Promise.reject(new GaggleError("INVALID_ARGS", `gaggle offers goslings no ${method}`));
}
