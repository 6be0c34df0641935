// Every simple command anywhere in a command line, with where it reads its input from, and every file a
// redirection names: what the banned-command guard reads, which refuses nothing itself.
import type { Node } from "web-tree-sitter";
import { literal, withTree } from "./bash-parser.js";
import { DATA } from "./command-grammar.js";
import { codeInAssignment, codeInBuiltin, codeInDeclaration, codeInExpansion, type Word } from "./hidden-code.js";

/** Where a command's standard input comes from, when the line says: the pipe before it, a here-document or here-string (its text, undefined when expanded), or a file. */
export type Stdin = { from: "pipe" } | { from: "text"; text: string | undefined } | { from: "file"; file: Word };

export interface LineCommand {
  /** Its name first, then its arguments; assignments before it and redirections left out. A construct among them (`<(...)`) is a word with no value. */
  words: Word[];
  stdin: Stdin | undefined;
}

export interface EveryCommand {
  /** In the order they are written, also those inside substitutions, subshells, groups, functions, loops and conditions. */
  commands: LineCommand[];
  /** The file each redirection names, as written, wherever it stands. */
  redirects: Word[];
  /** What turns a variable's value into code when the line runs (see hidden-code.ts), as a person would name it. */
  hidden: string[];
  /** Command lines a variable holds for the shell to run later (a literal PROMPT_COMMAND). */
  strings: string[];
  /** Parts the grammar could not read (its ERROR nodes), as written: bash may still run commands there. */
  unread: string[];
}

/** Operators that open a file on standard input when no descriptor is written before them. */
const INPUT_OPS = new Set(["<", "<>"]);

/**
 * Every simple command anywhere in `source`. A part the grammar could not read is skipped, and the commands around it
 * are still listed; nothing here is refused: the caller decides.
 */
export async function everyCommand(source: string): Promise<EveryCommand | { unverifiable: string }> {
  return withTree(source, (root) => {
    const found: EveryCommand = { commands: [], redirects: [], hidden: [], strings: [], unread: [] };
    const stack: Node[] = [root];
    for (let node = stack.pop(); node; node = stack.pop()) {
      const children = node.namedChildren.filter((child): child is Node => child !== null);
      if (node.type === "ERROR" || node.isMissing) found.unread.push(node.text);
      if (node.type === "command") {
        const name = node.childForFieldName("name");
        // Nodes are compared by id: each lookup gives a new object for the same node.
        const words = children.filter((child) => child.id === name?.id || (child.startIndex > (name?.startIndex ?? -1) && isWord(child)));
        if (name) {
          const command = { words: words.map((word) => ({ text: word.text, value: literal(word) })), stdin: stdinOf(node) };
          found.commands.push(command);
          const code = codeInBuiltin(command.words);
          if (code) found.hidden.push(code);
        }
      } else if (node.type === "variable_assignment") {
        const value = node.childForFieldName("value");
        const code = codeInAssignment({
          name: node.childForFieldName("name")?.text ?? "",
          value: value ? { text: value.text, value: literal(value) } : undefined,
        });
        if (typeof code === "string") found.hidden.push(code);
        else if (code) found.strings.push(code.commandLine);
      } else if (node.type === "declaration_command") {
        const words = node.children.filter((child): child is Node => child !== null && child.type !== "variable_assignment");
        const code = codeInDeclaration(
          words.map((word) => ({ text: word.text, value: word.isNamed && word.type !== "variable_name" ? literal(word) : word.text })),
        );
        if (code) found.hidden.push(code);
      } else if (node.type === "expansion") {
        const code = codeInExpansion(node.text);
        if (code) found.hidden.push(code);
      } else if (node.type === "file_redirect") {
        for (const target of children.filter((child) => child.type !== "file_descriptor" && child.type !== "ERROR")) {
          found.redirects.push({ text: target.text, value: literal(target) });
        }
      }
      // In source order, so that the commands come out in the order they are written.
      stack.push(...children.reverse());
    }
    return found;
  });
}

/** A word of a command's arguments: data, or a construct that stands for one (a process substitution). */
function isWord(node: Node): boolean {
  if (node.type === "process_substitution" || node.type === "command_substitution") return true;
  return DATA.has(node.type) && node.type !== "variable_assignment" && node.type !== "variable_assignments" && node.type !== "comment";
}

/**
 * The nearest source of `command`'s standard input, looking outwards: its own redirections, those of the statement
 * around it, then the pipe before it in a pipeline, then the same for the group, loop or substitution holding it.
 */
function stdinOf(command: Node): Stdin | undefined {
  const own = inputRedirect(command.namedChildren);
  if (own) return own;
  for (let node: Node = command, parent = node.parent; parent; node = parent, parent = node.parent) {
    if (parent.type === "redirected_statement") {
      const around = inputRedirect(parent.namedChildren.filter((child) => child?.id !== node.id));
      if (around) return around;
    }
    if (parent.type === "pipeline") {
      // `|` before it; a pipeline written after a here-document's start (`cat <<EOF | sh`) begins with one.
      const before = parent.children.filter((child) => child !== null && child.endIndex <= node.startIndex);
      if (before.some((child) => child!.type === "|" || child!.type === "|&")) return { from: "pipe" };
    }
  }
  return undefined;
}

/** The last redirection among `nodes` that feeds standard input. */
function inputRedirect(nodes: Array<Node | null>): Stdin | undefined {
  let found: Stdin | undefined;
  for (const node of nodes) {
    if (!node) continue;
    const descriptor = node.namedChildren.find((child) => child?.type === "file_descriptor")?.text;
    if (descriptor !== undefined && descriptor !== "0") continue;
    if (node.type === "herestring_redirect") {
      const word = node.namedChildren.find((child) => child !== null);
      found = { from: "text", text: word ? literal(word) : undefined };
    } else if (node.type === "heredoc_redirect") {
      const start = node.namedChildren.find((child) => child?.type === "heredoc_start")?.text ?? "";
      const body = node.namedChildren.find((child) => child?.type === "heredoc_body");
      // A quoted delimiter keeps the body as written; otherwise it is expanded, and only literal if nothing in it is.
      const quoted = /['"\\]/.test(start);
      const expanded = body?.namedChildren.some((child) => child?.type !== "heredoc_content") ?? false;
      found = { from: "text", text: quoted || !expanded ? heredocText(body) : undefined };
    } else if (node.type === "file_redirect") {
      const op = node.children.find((child) => child !== null && !child.isNamed)?.text ?? "";
      const target = node.namedChildren.find((child) => child !== null && child.type !== "file_descriptor");
      if (INPUT_OPS.has(op) && target) found = { from: "file", file: { text: target.text, value: literal(target) } };
    }
  }
  return found;
}

function heredocText(body: Node | null | undefined): string {
  return body?.text ?? "";
}
