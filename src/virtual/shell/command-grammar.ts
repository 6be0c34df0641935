// What a shell command line runs, read with bash's grammar (tree-sitter-bash): the simple commands it is made of
// and the files its redirections open, or the construct that makes that impossible to know before it runs.
import { createRequire } from "node:module";
import type * as TreeSitter from "web-tree-sitter";
import type { Node, Parser } from "web-tree-sitter";

export interface SimpleCommand {
  /** Its words as written (quotes kept), one space apart: assignments before it, its name, its arguments. */
  text: string;
  /** The command name with its quotes and escapes removed, as the shell looks it up. */
  name: string | undefined;
}

export interface FileRedirect {
  /** The operator as written: `>`, `>>`, `<`, `&>`, `>|`, `<>`, `>&` with a file, ... */
  op: string;
  /** The file, with its quotes and escapes removed; relative to the command's working directory. */
  path: string;
}

export type CommandLine = { commands: SimpleCommand[]; redirects: FileRedirect[] } | { unverifiable: string };

/** Longer input is refused rather than read: nobody types a command line this long, and a policy reads all of it. */
export const MAX_COMMAND_CHARS = 100_000;

/**
 * What bash would run for `source`, every construct accounted for. Anything that runs commands this reading
 * cannot list beforehand (command substitution, subshells, functions, loops, an expanded command name, a
 * redirection to an expanded path, a syntax error) makes the whole line unverifiable: callers refuse it.
 */
export async function readCommandLine(source: string): Promise<CommandLine> {
  if (source.length > MAX_COMMAND_CHARS) return { unverifiable: `a command line over ${MAX_COMMAND_CHARS} characters` };
  const parser = await bashParser();
  const tree = parser.parse(source);
  if (!tree) return { unverifiable: "a command line the shell grammar could not read" };
  try {
    return walk(tree.rootNode);
  } finally {
    tree.delete();
  }
}

let loading: Promise<Parser> | undefined;

/**
 * Loaded on first use: the grammar is WebAssembly, and most configurations never check a command. Required (its
 * CommonJS build), never import()ed: the built gaggle runs as a script from V8's code cache (src/cli/code-cache.ts),
 * and a script that Node 20 hands back from that cache has lost its import() callback, so import() throws
 * "A dynamic import callback was not specified".
 */
function bashParser(): Promise<Parser> {
  return (loading ??= (async () => {
    // Required, not imported: the bundle runs from V8's code cache, where import() has no loader (see bundle.mjs).
    const load = createRequire(import.meta.url);
    const { Parser, Language } = load("web-tree-sitter") as typeof TreeSitter;
    await Parser.init();
    const bash = await Language.load(load.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
    return new Parser().setLanguage(bash);
  })());
}

/** Constructs that only group or chain the commands inside them: their commands are read one by one. */
const CHAINS = new Set(["program", "list", "pipeline", "negated_command", "redirected_statement"]);

/** What may appear inside a command's words and redirections: data, never something that runs. */
const DATA = new Set([
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

function refusal(node: Node): { unverifiable: string } {
  return { unverifiable: CONSTRUCTS[node.type] ?? `the shell construct "${node.type}"` };
}

/** Iterative, so that a deeply nested line cannot exhaust the stack. */
function walk(root: Node): CommandLine {
  if (root.hasError) return { unverifiable: firstError(root) };
  const commands: SimpleCommand[] = [];
  const redirects: FileRedirect[] = [];
  const stack: Node[] = [root];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (node.type === "comment") continue;
    if (CHAINS.has(node.type)) {
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
      const banned = outsideData(node);
      if (banned) return refusal(banned);
      commands.push({ text: node.text, name: undefined });
      continue;
    }
    if (node.type === "command") {
      const read = readCommand(node);
      if ("unverifiable" in read) return read;
      commands.push(read.command);
      redirects.push(...read.redirects);
      continue;
    }
    return refusal(node);
  }
  return { commands, redirects: inSourceOrder(redirects) };
}

/** Where each redirection was read; a redirection before a command is read after the command's own. */
const positions = new WeakMap<FileRedirect, number>();

function inSourceOrder(redirects: FileRedirect[]): FileRedirect[] {
  return redirects.sort((a, b) => (positions.get(a) ?? 0) - (positions.get(b) ?? 0));
}

/** A simple command; a redirection written before or among its words (`> out echo hi`) is its own. */
function readCommand(node: Node): { command: SimpleCommand; redirects: FileRedirect[] } | { unverifiable: string } {
  const words: string[] = [];
  const redirects: FileRedirect[] = [];
  for (const child of node.namedChildren) {
    if (!child || child.type === "comment") continue;
    if (child.type.endsWith("_redirect")) {
      const read = readRedirect(child);
      if ("unverifiable" in read) return read;
      if (read.file) redirects.push(read.file);
      words.push(...read.words);
      continue;
    }
    const banned = DATA.has(child.type) ? outsideData(child) : child;
    if (banned) return refusal(banned);
    words.push(child.text);
  }
  const nameNode = node.childForFieldName("name");
  let name: string | undefined;
  if (nameNode) {
    name = literal(nameNode);
    if (name === undefined) return { unverifiable: `a command name that is expanded when it runs (${nameNode.text})` };
  }
  return { command: { text: words.join(" "), name }, redirects };
}

/** A redirection's file, if it opens one, and any words written after it. */
function readRedirect(node: Node): { file: FileRedirect | undefined; words: string[] } | { unverifiable: string } {
  const banned = outsideData(node);
  if (banned) return refusal(banned);
  if (node.type !== "file_redirect") return { file: undefined, words: [] }; // a heredoc or here-string: data on stdin
  const op = node.children.find((child) => child !== null && !child.isNamed)?.text ?? "";
  const [target, ...rest] = node.namedChildren.filter((child): child is Node => child !== null && child.type !== "file_descriptor");
  const words = rest.map((word) => word.text);
  if (!target) return { unverifiable: `a redirection without a target (${node.text})` };
  // `2>&1`, `<&0`, `>&-`: a descriptor copied or closed, no file opened.
  if ((op === ">&" || op === "<&") && /^(\d+-?|-)$/.test(target.text)) return { file: undefined, words };
  const path = literal(target);
  if (path === undefined || path === "") return { unverifiable: `a redirection to a path that is expanded when it runs (${target.text})` };
  const file = { op, path };
  positions.set(file, node.startIndex);
  return { file, words };
}

/** The first node under `node` that is not data: something that would run when the words are expanded. */
function outsideData(node: Node): Node | undefined {
  const stack = node.namedChildren.filter((child): child is Node => child !== null);
  for (let at = stack.pop(); at; at = stack.pop()) {
    if (at.type === "comment") continue;
    if (!DATA.has(at.type)) return at;
    stack.push(...at.namedChildren.filter((child): child is Node => child !== null));
  }
  return undefined;
}

/**
 * The word as the shell passes it on, when nothing in it is expanded at run time: quotes and backslashes
 * removed. Undefined for a word with an expansion, a glob, or a leading `~`.
 */
function literal(node: Node): string | undefined {
  const parts = node.type === "command_name" || node.type === "concatenation" ? node.namedChildren : [node];
  let text = "";
  for (const part of parts) {
    if (!part) continue;
    if (part.type === "concatenation" || part.type === "command_name") {
      const inner = literal(part);
      if (inner === undefined) return undefined;
      text += inner;
    } else if (part.type === "raw_string") text += part.text.slice(1, -1);
    else if (part.type === "string") {
      if (part.namedChildren.some((child) => child?.type !== "string_content")) return undefined;
      text += part.text.slice(1, -1).replace(/\\([$`"\\\n])/g, "$1");
    } else if (part.type === "word" || part.type === "number") {
      if (/^~|(?<!\\)[*?[]|(?<!\\)[{$`]/.test(part.text)) return undefined;
      text += part.text.replace(/\\(.)/gs, "$1");
    } else return undefined;
  }
  return text;
}

function firstError(root: Node): string {
  const stack: Node[] = [root];
  for (let at = stack.pop(); at; at = stack.pop()) {
    if (at.isError || at.isMissing) return `a syntax error near ${JSON.stringify(at.text.trim().slice(0, 40) || at.type)}`;
    stack.push(...at.children.filter((child): child is Node => child !== null).reverse());
  }
  return "a syntax error";
}

/** A word of a command: as written, and as the shell passes it on when nothing in it is expanded at run time. */
export interface Word {
  text: string;
  /** Quotes and escapes removed; undefined for a word with an expansion, a glob or a leading `~`. */
  value: string | undefined;
}

/**
 * Every simple command anywhere in `source`, each as its words (its name first; assignments before it and
 * redirections left out): also those inside command and process substitutions, subshells, groups, function
 * bodies, loops, conditions and the words of declarations. A part the grammar could not read is skipped, and
 * the commands around it are still listed. Unlike readCommandLine, nothing here is refused: the caller decides.
 */
export async function everyCommand(source: string): Promise<{ commands: Word[][] } | { unverifiable: string }> {
  if (source.length > MAX_COMMAND_CHARS) return { unverifiable: `a command line over ${MAX_COMMAND_CHARS} characters` };
  const parser = await bashParser();
  const tree = parser.parse(source);
  if (!tree) return { unverifiable: "a command line the shell grammar could not read" };
  try {
    const commands: Word[][] = [];
    const stack: Node[] = [tree.rootNode];
    for (let node = stack.pop(); node; node = stack.pop()) {
      const children = node.namedChildren.filter((child): child is Node => child !== null);
      if (node.type === "command") {
        const name = node.childForFieldName("name");
        // Nodes are compared by id: each lookup gives a new object for the same node.
        const words = children.filter((child) => child.id === name?.id || (child.startIndex > (name?.startIndex ?? -1) && isWord(child)));
        if (name) commands.push(words.map((word) => ({ text: word.text, value: literal(word) })));
      }
      // In source order, so that the commands come out in the order they are written.
      stack.push(...children.reverse());
    }
    return { commands };
  } finally {
    tree.delete();
  }
}

function isWord(node: Node): boolean {
  return DATA.has(node.type) && node.type !== "variable_assignment" && node.type !== "variable_assignments" && node.type !== "comment";
}
