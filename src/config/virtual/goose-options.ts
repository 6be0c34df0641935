// The `goose run` flags a gosling may be given: the allowlist, the flags gaggle sets itself, and their parsing.

/** One allowed flag of `goose run`, as the Goose CLI (clap) defines it. */
interface FlagSpec {
  /** "value": any string; "count": a positive integer (clap's u32); "none": a switch. */
  takes: "value" | "count" | "none";
  /** clap `ArgAction::Append`: may be given more than once. */
  repeatable: boolean;
  /** The placeholder shown in the list of allowed flags. */
  placeholder: string;
}

/** Maps, not objects: a name every object has ("constructor") is no flag. */
const ALLOWED = new Map<string, FlagSpec>(
  Object.entries({
    "--provider": { takes: "value", repeatable: false, placeholder: "PROVIDER" },
    "--model": { takes: "value", repeatable: false, placeholder: "MODEL" },
    "--with-builtin": { takes: "value", repeatable: true, placeholder: "NAME[,NAME]" },
    "--with-extension": { takes: "value", repeatable: true, placeholder: "COMMAND" },
    "--with-streamable-http-extension": { takes: "value", repeatable: true, placeholder: "URL" },
    "--max-turns": { takes: "count", repeatable: false, placeholder: "N" },
    "--max-tool-repetitions": { takes: "count", repeatable: false, placeholder: "N" },
    "--system": { takes: "value", repeatable: false, placeholder: "TEXT" },
    "--no-profile": { takes: "none", repeatable: false, placeholder: "" },
    "--debug": { takes: "none", repeatable: false, placeholder: "" },
  }),
);

/** Flags gaggle sets, or that would break the one-turn-per-process protocol, each with the reason. */
const RESERVED = new Map<string, string>(
  Object.entries({
    "--text": "gaggle passes the prompt itself with --text",
    "-t": "gaggle passes the prompt itself with --text",
    "--instructions": "it conflicts with --text, which gaggle sets",
    "-i": "it conflicts with --text, which gaggle sets",
    "--recipe": "it conflicts with --text, which gaggle sets",
    "--name": "gaggle names the Goose session itself (gosling-<id>)",
    "-n": "gaggle names the Goose session itself (gosling-<id>)",
    "--resume": "gaggle adds --resume to every turn after the first",
    "-r": "gaggle adds --resume to every turn after the first",
    "--no-session": "a gosling lives in its named session; --no-session conflicts with --name and --resume",
    "--session-id": "gaggle identifies the session by its name",
    "--path": "gaggle identifies the session by its name",
    "--interactive": "a gosling's turn must end so the next prompt can run",
    "-s": "a gosling's turn must end so the next prompt can run",
    "--output-format": "set by [virtual.goose] output_format",
    "--quiet": "it changes the output gaggle reads",
    "-q": "it changes the output gaggle reads",
  }),
);

export const ALLOWED_FLAGS_TEXT = [...ALLOWED].map(([flag, spec]) => (spec.placeholder ? `${flag} ${spec.placeholder}` : flag)).join(", ");

/** A problem with one option, in words a caller can act on. */
export class OptionError extends Error {
  override readonly name = "OptionError";
}

export interface RunOption {
  flag: string;
  value?: string;
}

/**
 * Parses `goose run` flags given as argv tokens (`["--model", "gpt-4o"]` or `["--model=gpt-4o"]`).
 * Throws OptionError naming the first problem; the message ends with the allowed flags.
 */
export function parseRunOptions(tokens: readonly string[]): RunOption[] {
  const parsed: RunOption[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const eq = token.startsWith("--") ? token.indexOf("=") : -1;
    const flag = eq === -1 ? token : token.slice(0, eq);
    const inline = eq === -1 ? undefined : token.slice(eq + 1);
    const reserved = RESERVED.get(flag);
    if (reserved !== undefined) throw refusal(`option "${flag}" is not allowed: ${reserved}`);
    const spec = ALLOWED.get(flag);
    if (!spec) {
      const what = flag.startsWith("-")
        ? `option "${flag}" is not allowed`
        : `unexpected value "${token}": options are flags, each followed by its value`;
      throw refusal(what);
    }
    if (!spec.repeatable && parsed.some((option) => option.flag === flag)) throw refusal(`option "${flag}" is given more than once`);
    if (spec.takes === "none") {
      if (inline !== undefined) throw refusal(`option "${flag}" takes no value`);
      parsed.push({ flag });
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = tokens[i + 1];
      // clap reads a following "-..." as the next flag; "--flag=-value" is the way to pass one.
      if (next === undefined || next.startsWith("-")) throw refusal(`option "${flag}" needs a value (${spec.placeholder})`);
      value = next;
      i++;
    }
    if (spec.takes === "count" && !/^[1-9][0-9]{0,8}$/.test(value)) {
      throw refusal(`option "${flag}" needs a positive integer, got "${value}"`);
    }
    parsed.push({ flag, value });
  }
  return parsed;
}

function refusal(what: string): OptionError {
  return new OptionError(`${what}. Allowed options: ${ALLOWED_FLAGS_TEXT}`);
}

/** Options given for one gosling replace the configured ones they overlap, except flags that may repeat. */
export function mergeOptions(configured: readonly RunOption[], given: readonly RunOption[]): RunOption[] {
  const overridden = new Set(given.filter((option) => !ALLOWED.get(option.flag)?.repeatable).map((option) => option.flag));
  return [...configured.filter((option) => !overridden.has(option.flag)), ...given];
}

/** argv tokens; a value that starts with "-" stays joined to its flag so Goose does not read it as a flag. */
export function optionTokens(options: readonly RunOption[]): string[] {
  return options.flatMap(({ flag, value }) => {
    if (value === undefined) return [flag];
    return value.startsWith("-") ? [`${flag}=${value}`] : [flag, value];
  });
}

export function hasFlag(options: readonly RunOption[], flag: string): boolean {
  return options.some((option) => option.flag === flag);
}
