// What a shell command line runs, read with bash's grammar (tree-sitter-bash): the simple commands it is made of
// and the files its redirections open, or the construct that makes that impossible to know before it runs.
import type { Node } from "web-tree-sitter";
import { literal, withTree } from "./bash-parser.js";
import { codeInAssignment, codeInBuiltin, codeInExpansion, nameOperands, type Word } from "./hidden-code.js";

export type { Word } from "./hidden-code.js";

export interface SimpleCommand {
  /** Its words as written (quotes kept), one space apart: assignments before it, its name, its arguments. */
  text: string;
  /** The command name with its quotes and escapes removed, as the shell looks it up. */
  name: string | undefined;
  /** Where it starts in the line. */
  at: number;
  /** For cd, pushd and popd: where the shell goes (see DirectoryChange); absent for a command that stays. */
  chdir?: DirectoryChange;
  /**
   * What joins it to the command before, as bash groups a line: `&&` (its pipeline runs only if the one before
   * succeeded), `||` (only if it failed), `|` (the same pipeline, `|&` included); absent when it starts a new list
   * (the line's start, `;`, `&`, a newline).
   */
  joint?: Joint;
  /** Its pipeline starts with `!`, which reverses the pipeline's status; set on a pipeline's first command. */
  negated?: true;
}

export type Joint = "&&" | "||" | "|";

/** Where `cd DIR`, `pushd DIR` or `popd` leaves the shell: `to` as written, undefined when known only at run time. */
export interface DirectoryChange {
  to: string | undefined;
  /** cd -P: symlinks in `to` are followed as the kernel follows them; otherwise `..` is taken textually first. */
  physical: boolean;
}

export interface FileRedirect {
  /** The operator as written: `>`, `>>`, `<`, `&>`, `>|`, `<>`, `>&` with a file, ... */
  op: string;
  /** The file, with its quotes and escapes removed; relative to the command's working directory. */
  path: string;
  /** Where it starts in the line. */
  at: number;
}

export type CommandLine = { commands: SimpleCommand[]; redirects: FileRedirect[] } | { unverifiable: string };

export { MAX_COMMAND_CHARS } from "./bash-parser.js";

/**
 * What bash would run for `source`, every construct accounted for. Anything that runs commands this reading
 * cannot list beforehand (command substitution, subshells, functions, loops, an expanded command name, a
 * redirection to an expanded path, a syntax error) makes the whole line unverifiable: callers refuse it.
 */
export async function readCommandLine(source: string): Promise<CommandLine> {
  return withTree(source, walk);
}

/** Constructs that only group or chain the commands inside them: their commands are read one by one. */
const CHAINS = new Set(["program", "list", "pipeline", "negated_command", "redirected_statement"]);

/** What may appear inside a command's words and redirections: data, never something that runs. */
export const DATA = new Set([
  "command_name",
  "word",
  "number",
  "string",
  "string_content",
  "raw_string",
  "ansi_c_string",
  "translated_string",
  "concatenation",
  "simple_expansion",
  "expansion",
  "variable_name",
  "special_variable_name",
  "variable_assignment",
  "variable_assignments",
  "array",
  "file_descriptor",
  "heredoc_start",
  "heredoc_body",
  "heredoc_content",
  "heredoc_end",
  "brace_expression",
]);

/** Names for what is refused, as a person would call it. */
const CONSTRUCTS: Record<string, string> = {
  command_substitution: "command substitution ($( ) or backticks)",
  process_substitution: "process substitution (<( ) or >( ))",
  arithmetic_expansion: "arithmetic expansion ($(( )))",
  subshell: "a subshell (( ))",
  compound_statement: "a command group ({ })",
  function_definition: "a function definition",
  if_statement: "an if statement",
  case_statement: "a case statement",
  for_statement: "a loop",
  c_style_for_statement: "a loop",
  while_statement: "a loop",
  test_command: "a test ([[ ]] or (( )))",
  declaration_command: "a declaration (export, declare, local, readonly, typeset)",
  unset_command: "unset",
  ERROR: "a syntax error",
};

function construct(node: Node): string {
  return CONSTRUCTS[node.type] ?? `the shell construct "${node.type}"`;
}

/** The operators between the commands of a line: what joins them, what separates lists, and `!`. */
const OPERATORS = new Set(["&&", "||", "|", "|&", ";", "&", "!"]);

/** Iterative, so that a deeply nested line cannot exhaust the stack. */
function walk(root: Node): CommandLine {
  if (root.hasError) return { unverifiable: firstError(root) };
  const commands: SimpleCommand[] = [];
  const redirects: FileRedirect[] = [];
  const operators: Array<{ op: string; at: number }> = [];
  const stack: Node[] = [root];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (node.type === "comment") continue;
    if (CHAINS.has(node.type)) {
      for (const child of node.children)
        if (child && !child.isNamed && OPERATORS.has(child.type)) operators.push({ op: child.type, at: child.startIndex });
      const parts = node.namedChildren.filter((child): child is Node => child !== null);
      if (node.type === "redirected_statement") {
        const body = parts.filter((part) => !part.type.endsWith("_redirect"));
        const extra: string[] = [];
        for (const redirect of parts.filter((part) => part.type.endsWith("_redirect"))) {
          const read = readRedirect(redirect);
          if ("unverifiable" in read) return read;
          if (read.file) redirects.push(read.file);
          extra.push(...read.words);
        }
        // Words after a redirection's file are the command's arguments (`npm test > out --flag`).
        if (extra.length > 0) {
          const [only] = body;
          if (body.length !== 1 || only?.type !== "command") return { unverifiable: "words after a redirection of a compound command" };
          const read = readCommand(only);
          if ("unverifiable" in read) return read;
          commands.push({ ...read.command, text: [read.command.text, ...extra].join(" ") });
          redirects.push(...read.redirects);
          continue;
        }
        stack.push(...body.reverse());
        continue;
      }
      stack.push(...parts.reverse());
      continue;
    }
    if (node.type === "variable_assignment" || node.type === "variable_assignments") {
      // `A=1` alone sets a shell variable and runs nothing; it still has to be allowed, as written.
      const code = codeIn(node);
      if (code) return { unverifiable: code };
      if (/^CDPATH(\[|\+?=)/.test(node.text)) return { unverifiable: CDPATH_CHANGE };
      commands.push({ text: node.text, name: undefined, at: node.startIndex });
      continue;
    }
    if (node.type === "command") {
      const read = readCommand(node);
      if ("unverifiable" in read) return read;
      commands.push(read.command);
      redirects.push(...read.redirects);
      continue;
    }
    return { unverifiable: construct(node) };
  }
  // A redirection before a command is read after the command's own: in source order again.
  return { commands: joined(commands, operators), redirects: redirects.sort((a, b) => a.at - b.at) };
}

/**
 * Each command with what joins it to the one before, read from the operators between them in source order. Only
 * simple commands reach here (every compound is refused), so bash's own grouping follows from that order alone:
 * tree-sitter-bash nests a redirection or pipeline after `&&` around the whole list (`a && b > f | c`), bash does not.
 */
function joined(commands: SimpleCommand[], operators: Array<{ op: string; at: number }>): SimpleCommand[] {
  commands.sort((a, b) => a.at - b.at);
  operators.sort((a, b) => a.at - b.at);
  let next = 0;
  return commands.map((command) => {
    let joint: Joint | undefined;
    let negated = false;
    for (; next < operators.length && operators[next]!.at < command.at; next++) {
      const { op } = operators[next]!;
      if (op === "!") negated = !negated;
      else {
        joint = op === "|&" ? "|" : op === "&&" || op === "||" || op === "|" ? op : undefined;
        negated = false;
      }
    }
    return { ...command, ...(joint && { joint }), ...(negated && { negated: true as const }) };
  });
}

const CDPATH_CHANGE = "a change to CDPATH, which moves where cd goes";

/** A simple command; a redirection written before or among its words (`> out echo hi`) is its own. */
function readCommand(node: Node): { command: SimpleCommand; redirects: FileRedirect[] } | { unverifiable: string } {
  const words: string[] = [];
  const redirects: FileRedirect[] = [];
  const nameNode = node.childForFieldName("name");
  // The name and its arguments as the shell passes them on, for the builtins that take variables' names.
  const argv: Word[] = [];
  for (const child of node.namedChildren) {
    if (!child || child.type === "comment") continue;
    if (child.type.endsWith("_redirect")) {
      const read = readRedirect(child);
      if ("unverifiable" in read) return read;
      if (read.file) redirects.push(read.file);
      words.push(...read.words);
      argv.push(...read.words.map((text) => ({ text, value: undefined })));
      continue;
    }
    const code = DATA.has(child.type) ? codeIn(child) : construct(child);
    if (code) return { unverifiable: code };
    words.push(child.text);
    if (nameNode && child.startIndex >= nameNode.startIndex) argv.push({ text: child.text, value: literal(child) });
  }
  let name: string | undefined;
  if (nameNode) {
    name = literal(nameNode);
    if (name === undefined) return { unverifiable: `a command name that is expanded when it runs (${nameNode.text})` };
    if (name === "coproc") return { unverifiable: "coproc, whose command bash's grammar here does not read as one" };
    // Bash negates twice (`! ! cmd`); the grammar here reads the second `!` as a command's name, hiding what runs.
    if (name === "!") return { unverifiable: "`!` twice in a row, whose command bash's grammar here does not read as one" };
    const code = codeInBuiltin(argv) ?? cdpathChange(argv);
    if (code) return { unverifiable: code };
  }
  for (const child of node.namedChildren)
    if (child?.type === "variable_assignment" && /^CDPATH(\[|\+?=)/.test(child.text)) return { unverifiable: CDPATH_CHANGE };
  const chdir = directoryChange(argv);
  return { command: { text: words.join(" "), name, at: node.startIndex, ...(chdir && { chdir }) }, redirects };
}

/** A redirection's file, if it opens one, and any words written after it. */
function readRedirect(node: Node): { file: FileRedirect | undefined; words: string[] } | { unverifiable: string } {
  const code = codeIn(node);
  if (code) return { unverifiable: code };
  if (node.type !== "file_redirect") return { file: undefined, words: [] }; // a heredoc or here-string: data on stdin
  const op = node.children.find((child) => child !== null && !child.isNamed)?.text ?? "";
  const [target, ...rest] = node.namedChildren.filter((child): child is Node => child !== null && child.type !== "file_descriptor");
  const words = rest.map((word) => word.text);
  if (!target) return { unverifiable: `a redirection without a target (${node.text})` };
  // `2>&1`, `<&0`, `>&-`: a descriptor copied or closed, no file opened.
  if ((op === ">&" || op === "<&") && /^(\d+-?|-)$/.test(target.text)) return { file: undefined, words };
  const path = literal(target);
  if (path === undefined || path === "") return { unverifiable: `a redirection to a path that is expanded when it runs (${target.text})` };
  return { file: { op, path, at: node.startIndex }, words };
}

/**
 * What under `node` would run when its words are expanded, named as a person would: the first part that is not
 * data, or an expansion that turns a variable's value into code (see hidden-code.ts). Undefined when it is all data.
 */
function codeIn(node: Node): string | undefined {
  const stack = [node];
  for (let at = stack.pop(); at; at = stack.pop()) {
    if (at.type === "comment") continue;
    if (at !== node && !DATA.has(at.type)) return construct(at);
    if (at.type === "variable_assignment") {
      const value = at.childForFieldName("value");
      const code = codeInAssignment({
        name: at.childForFieldName("name")?.text ?? "",
        value: value ? { text: value.text, value: literal(value) } : undefined,
      });
      if (typeof code === "string") return code;
      if (code) return "an assignment to PROMPT_COMMAND, a command line the shell runs later";
    }
    if (at.type === "expansion") {
      const code = codeInExpansion(at.text) ?? (/^\$\{CDPATH:?=/.test(at.text) ? CDPATH_CHANGE : undefined);
      if (code) return code;
    }
    stack.push(...at.namedChildren.filter((child): child is Node => child !== null));
  }
  return undefined;
}

/** A builtin that sets a variable by name (read, mapfile, getopts, ...) setting CDPATH, or one named only when it runs. */
function cdpathChange(argv: Word[]): string | undefined {
  const names = nameOperands(argv);
  if (names === undefined) return undefined;
  if ("unknown" in names) return `${argv[0]?.text} with ${names.unknown}, which may set CDPATH and move where cd goes`;
  return names.names.some((name) => name.value === undefined || name.value === "CDPATH") ? CDPATH_CHANGE : undefined;
}

/** The options cd takes; -P and -L say how it follows symlinks, the last one given winning. */
const CD_OPTIONS = /^-[LPe@]+$/;

/** Where cd, pushd or popd (`builtin` or `command` before it looked through) leaves the shell; undefined for other commands. */
function directoryChange(argv: Word[]): DirectoryChange | undefined {
  const words = argv[0]?.value === "builtin" || argv[0]?.value === "command" ? argv.slice(1) : argv;
  const [name, ...args] = words;
  const unknown = { to: undefined, physical: false };
  if (name?.value === "cd") {
    let physical = false;
    let at = 0;
    for (; at < args.length && args[at]!.value !== undefined && CD_OPTIONS.test(args[at]!.value!); at++) {
      physical = args[at]!.value!.lastIndexOf("P") > args[at]!.value!.lastIndexOf("L") ? true : args[at]!.value!.includes("L") ? false : physical;
    }
    if (args[at]?.value === "--") at++;
    const to = args[at]?.value;
    // No operand is $HOME, `-` is $OLDPWD: both known only when it runs.
    return to === undefined || to === "-" || to === "" ? unknown : { to, physical };
  }
  if (name?.value === "pushd" || name?.value === "popd") {
    if (args.some((word) => word.value === "-n")) return undefined; // only the directory stack changes
    const to = name.value === "pushd" ? args.find((word) => word.value !== "--")?.value : undefined;
    // popd, pushd alone and pushd +N go where the directory stack says.
    return to === undefined || /^[+-]\d+$/.test(to) ? unknown : { to, physical: false };
  }
  return undefined;
}

function firstError(root: Node): string {
  const stack: Node[] = [root];
  for (let at = stack.pop(); at; at = stack.pop()) {
    if (at.isError || at.isMissing) return `a syntax error near ${JSON.stringify(at.text.trim().slice(0, 40) || at.type)}`;
    stack.push(...at.children.filter((child): child is Node => child !== null).reverse());
  }
  return "a syntax error";
}
