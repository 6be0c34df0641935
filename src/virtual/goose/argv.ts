// Owns the exact command line of one gosling turn: `goose run --name <session> [--resume] --text <prompt> ...`.
import { hasFlag, optionTokens, type RunOption } from "../../config/virtual/goose-options.js";

export interface TurnArgvInput {
  /** `[virtual.goose] args`: what comes between the command and `run`. */
  prefixArgs: readonly string[];
  session: string;
  resume: boolean;
  prompt: string;
  outputFormat: "stream-json" | "text";
  /** Defaults from config, used unless `options` name a provider or model themselves. */
  provider: string | undefined;
  model: string | undefined;
  /** Configured options merged with the gosling's own (see mergeOptions). */
  options: readonly RunOption[];
}

export function turnArgv(input: TurnArgvInput): string[] {
  const argv = [...input.prefixArgs, "run", "--name", input.session];
  if (input.resume) argv.push("--resume");
  // clap would read a prompt starting with "-" as a flag; joined to --text it stays the prompt.
  if (input.prompt.startsWith("-")) argv.push(`--text=${input.prompt}`);
  else argv.push("--text", input.prompt);
  // Older Goose versions have no --output-format; output_format = "text" leaves it out for them.
  if (input.outputFormat === "stream-json") argv.push("--output-format", "stream-json");
  if (input.provider !== undefined && !hasFlag(input.options, "--provider")) argv.push("--provider", input.provider);
  if (input.model !== undefined && !hasFlag(input.options, "--model")) argv.push("--model", input.model);
  argv.push(...optionTokens(input.options));
  return argv;
}

/** The Goose session a gosling lives in: `gosling-` and the first 8 hex digits of its id. */
export function sessionName(goslingId: string): string {
  return `gosling-${goslingId.replace(/-/g, "").slice(0, 8)}`;
}
