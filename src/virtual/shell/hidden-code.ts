// What in a command's words runs code when bash expands them though no $( ) is written: prompt expansion
// (${x@P}), indirection (${!x}), arithmetic on variables (substring offsets and lengths, `let`), and builtins that
// take a variable's name (printf -v, read, test -v), whose subscripts bash evaluates ("a[$(id)]" runs id). Any
// variable's value (`$_` is the last word of the command before) is data to a reader of the line; these make it code.

/** A word of a command: as written, and as the shell passes it on when nothing in it is expanded at run time. */
export interface Word {
  text: string;
  /** Quotes and escapes removed; undefined for a word with an expansion, a glob or a leading `~`. */
  value: string | undefined;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `${` then an optional `!` or `#`, then the parameter: a name, a positional number or a special parameter. */
const HEAD = /^\$\{([!#]?)([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[-@*#?$!_0])/;

/** `${x@OP}` operators that only quote or change case or describe: @P (prompt expansion) is not among them. */
const SAFE_TRANSFORMS = new Set(["Q", "E", "A", "a", "K", "k", "U", "u", "L"]);

/** An offset or length written as a whole number (`${x:1:2}`, `${x: -1}`): anything else is an arithmetic expression. */
const NUMBER = String.raw`\s*-?\s*\d+\s*`;
const SUBSTRING = new RegExp(`^(?:${NUMBER})?(?::(?:${NUMBER})?)?$`);

/**
 * Why the `${...}` expansion `text` runs code when it is expanded, or undefined when it only reads or changes text.
 * Only its head is read (the parameter and the operator after it); the words inside an operator (`${x:-WORD}`) are
 * the caller's to check, as nodes of their own.
 */
export function codeInExpansion(written: string): string | undefined {
  const text = written.trim();
  const head = HEAD.exec(text);
  if (!head) return `the expansion ${text}, which the policy does not read`;
  const [whole, prefix, name] = head as unknown as [string, string, string];
  let rest = text.slice(whole.length, text.endsWith("}") ? -1 : undefined);
  let subscript: string | undefined;
  if (rest.startsWith("[")) {
    const end = rest.indexOf("]");
    subscript = rest.slice(1, end === -1 ? undefined : end);
    rest = end === -1 ? "" : rest.slice(end + 1);
    // An indexed array's subscript is arithmetic: a name there is evaluated, with whatever its value holds.
    if (!/^(\s*-?\d+\s*|@|\*)$/.test(subscript)) {
      return `an array subscript that is an arithmetic expression (${text}), which can run commands held in variables`;
    }
  }
  if (prefix === "!") {
    // ${!prefix*}, ${!prefix@} and ${!array[@]} list names and keys; any other ${!x} expands x's value as a name, subscripts and all.
    if (
      IDENTIFIER.test(name) &&
      ((subscript === undefined && (rest === "*" || rest === "@")) || (rest === "" && (subscript === "@" || subscript === "*")))
    ) {
      return undefined;
    }
    return `indirect expansion (${text}), which evaluates a variable's value as a name and can run commands`;
  }
  if (rest.startsWith("@") && !SAFE_TRANSFORMS.has(rest.slice(1))) {
    return `prompt expansion (${text}), which runs the command substitutions in a variable's value`;
  }
  if (rest.startsWith(":") && !/^:[-=+?]/.test(rest) && !SUBSTRING.test(rest.slice(1))) {
    return `a substring whose offset or length is an arithmetic expression (${text}), which can run commands held in variables`;
  }
  return undefined;
}

/** Variables whose assigned value bash evaluates as arithmetic, subscripts and all (`RANDOM=$_`). */
const ARITHMETIC_VARIABLES = new Set(["RANDOM", "SRANDOM", "OPTIND", "HISTCMD"]);

/** Variables whose value bash expands as a prompt, command substitutions included (PS4 under `set -x`; the rest in an interactive shell). */
const PROMPT_VARIABLES = new Set(["PS0", "PS1", "PS2", "PS3", "PS4"]);

/** Variables naming a file a shell started later runs as its start-up script. */
const STARTUP_VARIABLES = new Set(["BASH_ENV", "ENV"]);

/** What an assignment `NAME=VALUE` sets when it is read: the name as written (`a[1]` included), its value, if any. */
export interface Assignment {
  name: string;
  value: Word | undefined;
}

/**
 * Why the assignment runs code when it is made or when the variable is used later, or undefined: a subscript that
 * is an arithmetic expression (`a[$_]=1`), a value bash evaluates as arithmetic (`RANDOM=$_`), a prompt whose value
 * holds expansions (`PS4='$(id)'` runs id under `set -x`), or a start-up file known only when it runs. A literal
 * PROMPT_COMMAND is a command line: `commandLine` says so, for the caller to read.
 */
export function codeInAssignment(assignment: Assignment): string | undefined | { commandLine: string } {
  const { name, value } = assignment;
  const bracket = name.indexOf("[");
  if (bracket !== -1) {
    const subscript = name.slice(bracket + 1, name.endsWith("]") ? -1 : undefined);
    if (!/^\s*-?\d+\s*$/.test(subscript)) {
      return `an array subscript that is an arithmetic expression (${name}=), which can run commands held in variables`;
    }
    return undefined;
  }
  const literal = value?.value ?? (value === undefined ? "" : undefined);
  if (ARITHMETIC_VARIABLES.has(name) && (literal === undefined || !/^\s*-?\d*\s*$/.test(literal))) {
    return `an assignment to ${name}, whose value bash evaluates as arithmetic and which can run commands held in variables`;
  }
  if (PROMPT_VARIABLES.has(name) && (literal === undefined || /[$`\\]/.test(literal))) {
    return `an assignment to ${name}, whose value bash expands as a prompt and which can run commands`;
  }
  if (STARTUP_VARIABLES.has(name) && literal === undefined) {
    return `an assignment to ${name}, a start-up file known only when it runs`;
  }
  if (name === "PROMPT_COMMAND") {
    return literal === undefined ? "an assignment to PROMPT_COMMAND, a command line known only when it runs" : { commandLine: literal };
  }
  return undefined;
}

/** Attributes that turn the variable's later values into code: -i (arithmetic) and -n (a name, subscripts evaluated). */
const CODE_ATTRIBUTES = /^[-+][a-zA-Z]*[in]/;

/** Why a declaration (`declare -i n`, `local -n r=x`) makes a variable's later values code, or undefined. */
export function codeInDeclaration(words: Word[]): string | undefined {
  const [name, ...options] = words;
  if (name?.value === "export" || name?.value === "readonly") return undefined;
  const attribute = options.find((word) => word.value === undefined || CODE_ATTRIBUTES.test(word.value));
  if (attribute === undefined) return undefined;
  return attribute.value === undefined
    ? `${name?.text} with an expanded word (${attribute.text}), which may give a variable the integer or nameref attribute`
    : `${name?.text} ${attribute.text}, an integer or nameref attribute, which makes the variable's later values code`;
}

/** Builtins that evaluate what they are given as arithmetic: a variable named there can hold commands. */
const ARITHMETIC = new Set(["let"]);

/** Builtins that evaluate a variable's name with its subscript (mapfile, getopts and wait -p check it is a plain name). */
const EVALUATE_NAMES = new Set(["printf", "read", "test", "["]);

/**
 * Why the simple command `words` (its name first) runs code held in data, or undefined. Variable names given to
 * printf -v, read and test -v are evaluated with their subscripts, so each must be written out as a plain name;
 * an expansion that may become an option or a name is refused too (unquoted, it may split into several words).
 */
export function codeInBuiltin(words: Word[]): string | undefined {
  const command = unwrapped(words);
  const name = command[0]?.value;
  if (name === undefined) return undefined;
  if (ARITHMETIC.has(name)) return `${name}, which evaluates arithmetic on variables' values and can run commands held in them`;
  if (!EVALUATE_NAMES.has(name)) return undefined;
  const targets = nameOperands(command);
  if (targets === undefined) return undefined;
  if ("unknown" in targets) return `${name} with ${targets.unknown}, which may name a variable whose subscript runs commands`;
  const bad = targets.names.find((target) => target.value === undefined || !IDENTIFIER.test(target.value));
  if (bad) return `${name} given ${bad.text} as a variable's name, whose subscript bash would evaluate and which can run commands`;
  return undefined;
}

/**
 * The variable names a builtin writes or reads by name (printf -v, read, mapfile, readarray, getopts, wait -p,
 * test -v/-R; `builtin` and `command` before it looked through), `unknown` when an expanded word may become an
 * option or a name, undefined for a command that takes no names. A name with an expansion has an undefined value.
 */
export function nameOperands(words: Word[]): { names: Word[] } | { unknown: string } | undefined {
  const [first, ...args] = unwrapped(words);
  switch (first?.value) {
    case "printf":
      return printfNames(args);
    case "read":
      return optionNames(args, "adinNptu", "a");
    case "mapfile":
    case "readarray":
      return optionNames(args, "dnOsuCc", "");
    case "wait": {
      // Its other operands are process ids; only -p names a variable.
      const at = args.findIndex((word) => word.value === "-p");
      return { names: at === -1 ? [] : args.slice(at + 1, at + 2) };
    }
    case "getopts":
      return { names: args.slice(1, 2) };
    case "test":
    case "[":
      return testNames(args);
    default:
      return undefined;
  }
}

/** `builtin NAME ...` and `command NAME ...` run NAME as it is; `command -v NAME` only says what NAME is. */
function unwrapped(words: Word[]): Word[] {
  let at = 0;
  for (;;) {
    const name = words[at]?.value;
    if (name === "builtin") at++;
    else if (name === "command") {
      at++;
      while (words[at]?.value === "-p") at++;
      if (words[at]?.value === "-v" || words[at]?.value === "-V") return [];
    } else return words.slice(at);
  }
}

function printfNames(args: Word[]): { names: Word[] } | { unknown: string } {
  const [first, second] = args;
  if (first === undefined) return { names: [] };
  if (first.value === undefined) {
    // "$fmt" alone is one word, a format; unquoted it may split, and with more words after it, it may be -v.
    return args.length > 1 || !wholeQuoted(first) ? { unknown: `an expanded first argument (${first.text})` } : { names: [] };
  }
  if (first.value === "-v") return { names: second ? [second] : [] };
  if (first.value.startsWith("-v")) return { names: [{ text: first.text, value: first.value.slice(2) }] };
  return { names: [] };
}

/**
 * Options (one letter each, grouped as getopts reads them), of which those in `withValue` take a value and those in
 * `named` a variable's name; the words after the options are names too.
 */
function optionNames(args: Word[], withValue: string, named: string): { names: Word[] } | { unknown: string } {
  const names: Word[] = [];
  let at = 0;
  for (; at < args.length; at++) {
    const word = args[at]!;
    if (word.value === undefined) {
      break; // a name with an expansion: the caller judges it
    }
    if (word.value === "--") {
      at++;
      break;
    }
    if (!word.value.startsWith("-") || word.value === "-") break;
    for (let i = 1; i < word.value.length; i++) {
      const option = word.value[i]!;
      if (!withValue.includes(option)) continue;
      const attached = word.value.slice(i + 1);
      const value: Word | undefined = attached !== "" ? { text: word.text, value: attached } : args[++at];
      if (named.includes(option) && value) names.push(value);
      break;
    }
  }
  for (const word of args.slice(at)) {
    if (word.value === undefined && !wholeQuoted(word))
      return { unknown: `an unquoted expansion (${word.text}), which may split into options and names` };
    names.push(word);
  }
  return { names };
}

/** test and [: the operand of -v or -R is a variable's name; an unquoted expansion may split into `-v NAME`. */
function testNames(args: Word[]): { names: Word[] } | { unknown: string } {
  const names: Word[] = [];
  for (let at = 0; at < args.length; at++) {
    const word = args[at]!;
    if (word.value === undefined && !wholeQuoted(word))
      return { unknown: `an unquoted expansion (${word.text}), which may split into -v and a name` };
    if ((word.value === "-v" || word.value === "-R") && args[at + 1]) names.push(args[++at]!);
  }
  return { names };
}

/** A word that is one double-quoted string as written: its expansion is one word, never split. */
function wholeQuoted(word: Word): boolean {
  return /^"(?:[^"\\]|\\.)*"$/s.test(word.text);
}
