// Owns how a gosling's turns run: one `goose run` process per turn, or prompts to the gosling's own `goose acp`
// process, chosen once per gosling when its first turn starts.
import type { ProcessExit } from "../../children/processes/group-process.js";
import { LineProcess } from "../../children/processes/line-process.js";
import { spawnProblem } from "../../children/processes/spawn-problem.js";
import type { RunOption } from "../../config/virtual/goose-options.js";
import { turnArgv } from "./argv.js";
import { StreamJsonReader, TextReader, type OutputReader, type TurnFacts } from "./stream-json.js";
import type { Transcript } from "./transcript.js";

/** One running turn. */
export interface RunningTurn {
  /** Resolves when the turn has ended: its process exited (goose run), or its prompt was answered (goose acp). */
  readonly done: Promise<ProcessExit>;
  /** Stops the turn; resolves once it has ended. */
  stop(): Promise<unknown>;
}

/** What a turn's output said about it, once it has ended. */
export interface TurnReader {
  finish(): TurnFacts;
}

/** Where one turn's output goes. */
export interface TurnSinks {
  transcript: Transcript;
  /** A notice Goose printed (its compaction notices). */
  notice(text: string): void;
  stderr(line: string): void;
}

/** A gosling's way of running turns; it lives as long as the gosling and is closed when the gosling is released. */
export interface GoslingTurns {
  /** Starts a turn on `prompt`; `resume`: the Goose session exists already. Rejects when Goose cannot be started. */
  start(prompt: string, resume: boolean, sinks: TurnSinks): Promise<{ turn: RunningTurn; reader: TurnReader }>;
  /** Its conversation as a later gosling continues it, once known: an ACP session id; undefined for `goose run`, whose session is the gosling's name. */
  readonly conversation: string | undefined;
  /** The way its turns run, for its status: "goose run" or "goose acp". */
  readonly transport: string | undefined;
  /** Stops any process it keeps between turns. */
  close(): Promise<void>;
}

/** How `goose` is started, resolved from the config once. */
export interface GooseLaunch {
  command: string;
  /** Absolute. */
  cwd: string;
  /** gaggle's environment with `[virtual.goose] env` over it, and NO_COLOR=1. */
  env: Record<string, string>;
  graceMs: number;
}

/** What a gosling's `goose run` turns are made of. */
export interface RunTurnsInput {
  launch: GooseLaunch;
  prefixArgs: readonly string[];
  session: string;
  cwd: string;
  options: readonly RunOption[];
  outputFormat: "stream-json" | "text";
  provider: string | undefined;
  model: string | undefined;
  maxOutputBytes: number;
}

/** One `goose run --name <session> [--resume] --text <prompt> ...` per turn, in its own process group. */
export class RunTurns implements GoslingTurns {
  readonly conversation = undefined;
  readonly transport = "goose run";

  constructor(private readonly input: RunTurnsInput) {}

  async start(prompt: string, resume: boolean, sinks: TurnSinks): Promise<{ turn: RunningTurn; reader: TurnReader }> {
    const { input } = this;
    const reader: OutputReader =
      input.outputFormat === "text" ? new TextReader(sinks.transcript) : new StreamJsonReader(sinks.transcript, (text) => sinks.notice(text));
    const argv = turnArgv({
      prefixArgs: input.prefixArgs,
      session: input.session,
      resume,
      prompt,
      outputFormat: input.outputFormat,
      provider: input.provider,
      model: input.model,
      options: input.options,
    });
    try {
      const turn = await LineProcess.start({
        command: input.launch.command,
        argv,
        cwd: input.cwd,
        env: input.launch.env,
        graceMs: input.launch.graceMs,
        // Half the transcript's cap: a cut line still fits in the transcript with room to spare.
        maxLineChars: Math.max(1024, Math.floor(input.maxOutputBytes / 2)),
        onStdoutLine: (line) => reader.read(line),
        onStderrLine: (line) => sinks.stderr(line),
      });
      return { turn, reader };
    } catch (error) {
      throw new Error(`"${input.launch.command}" ${spawnProblem(error)}`, { cause: error });
    }
  }

  async close(): Promise<void> {}
}

/** The turns of a gosling whose way is chosen when its first turn starts (the choice may need a probe of Goose). */
export class ChosenTurns implements GoslingTurns {
  private chosen: Promise<GoslingTurns> | undefined;
  private settled: GoslingTurns | undefined;

  constructor(private readonly choose: () => Promise<GoslingTurns>) {}

  get conversation(): string | undefined {
    return this.settled?.conversation;
  }

  get transport(): string | undefined {
    return this.settled?.transport;
  }

  async start(prompt: string, resume: boolean, sinks: TurnSinks): Promise<{ turn: RunningTurn; reader: TurnReader }> {
    this.chosen ??= this.choose().then((turns) => (this.settled = turns));
    return (await this.chosen).start(prompt, resume, sinks);
  }

  async close(): Promise<void> {
    const turns = await this.chosen?.catch(() => undefined);
    await turns?.close();
  }
}
