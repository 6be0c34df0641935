// Edit (one exact, unique replacement, or a new file) and Replace (a whole file), each answering with what changed;
// with [virtual.workspace] backups, the old content kept in FILE.bak.
import { access } from "node:fs/promises";
import { z } from "zod";
import { GaggleError } from "../../shared/errors.js";
import { textResult } from "../../shared/tool-results.js";
import { defineTool, type VirtualTool } from "../virtual-child.js";
import { backUp } from "./backup.js";
import { kindOf } from "./file-kind.js";
import { fsFailure } from "./fs-errors.js";
import { numberedRange } from "./numbered.js";
import { closeWritable, openToWrite, rewrite, type Writable } from "./opened.js";
import type { Workspace } from "./place.js";

/** Lines of context shown around an edit. */
const CONTEXT = 3;
/** An edit's answer shows at most this many lines of the new text. */
const MAX_SHOWN = 60;

/** What the descriptions say of backups, when they are on. */
const BACKUP_NOTE = " The file's old content is first copied to FILE.bak beside it (replacing an older one).";

export function editTool(workspace: Workspace): VirtualTool {
  const { maxEditBytes, backups } = workspace.settings;
  return defineTool({
    name: "Edit",
    title: "Replace one exact piece of a file",
    description:
      "Replaces old_string with new_string in a file. old_string must match the file exactly (whitespace and indentation " +
      "included) and exactly once: when it matches several times, the error lists the line of each match; add surrounding " +
      "lines until it is unique. An empty old_string creates a new file holding new_string (refused if the file exists). " +
      `Binary files and files over ${maxEditBytes} bytes are refused. Answers with the changed lines and their numbers. ` +
      "Use Replace to rewrite a whole file." +
      (backups ? BACKUP_NOTE : ""),
    input: z.strictObject({
      file_path: z.string().min(1).describe("The file to edit: absolute, or relative to the shell's working directory"),
      old_string: z.string().describe("The text to replace, exactly as in the file; empty to create a new file"),
      new_string: z.string().describe("The text to put in its place"),
    }),
    annotations: { destructiveHint: true, openWorldHint: false },
    run: async ({ file_path, old_string, new_string }, ctx) => {
      const place = await workspace.place(ctx);
      const path = await place.confine(file_path);
      if (old_string === "") {
        if (await exists(path)) {
          throw new GaggleError("INVALID_ARGS", `${path} already exists, and an empty old_string only creates a new file`, {
            hint: "give the text to replace as old_string, or rewrite the whole file with Replace",
          });
        }
        checkSize(path, new_string, maxEditBytes);
        const created = await openToWrite(place, path, { create: "only", parents: true });
        return withFile(created, async () => {
          await rewrite(created, new_string);
          return textResult(`Created ${path} (${lineCount(new_string)} lines)`);
        });
      }
      const file = await openToWrite(place, path, { create: "never" });
      return withFile(file, async () => {
        const before = await readText(file, maxEditBytes);
        const at = occurrences(before, old_string);
        if (at.length === 0) {
          throw new GaggleError("INVALID_ARGS", `old_string was not found in ${path}`, {
            hint: "View the file and copy the text exactly, whitespace and indentation included",
          });
        }
        if (at.length > 1) {
          const lines = linesOf(before, at);
          throw new GaggleError("INVALID_ARGS", `old_string occurs ${at.length} times in ${path}, starting at lines ${lines.join(", ")}`, {
            hint: "add surrounding lines to old_string until it matches only the place to change",
          });
        }
        const index = at[0]!;
        const after = before.slice(0, index) + new_string + before.slice(index + old_string.length);
        checkSize(path, after, maxEditBytes);
        const backup = backups ? `\n${await backUp(file)}` : "";
        await rewrite(file, after);
        return textResult(editAnswer(path, after, lineAt(before, index), old_string, new_string) + backup);
      });
    },
  });
}

export function replaceTool(workspace: Workspace): VirtualTool {
  const { maxEditBytes, backups } = workspace.settings;
  return defineTool({
    name: "Replace",
    title: "Write a whole file",
    description:
      "Writes content to a file, replacing what it held, or creating it (and its missing folders) under the allowed roots. " +
      "Use Edit to change part of a file." +
      (backups ? BACKUP_NOTE : ""),
    input: z.strictObject({
      file_path: z.string().min(1).describe("The file to write: absolute, or relative to the shell's working directory"),
      content: z.string().describe("The file's whole new content"),
    }),
    annotations: { destructiveHint: true, openWorldHint: false },
    run: async ({ file_path, content }, ctx) => {
      const place = await workspace.place(ctx);
      const path = await place.confine(file_path);
      checkSize(path, content, maxEditBytes);
      const file = await openToWrite(place, path, { create: "either", parents: true });
      return withFile(file, async () => {
        const lines = lineCount(content);
        if (file.created) {
          await rewrite(file, content);
          return textResult(`Created ${path} (${lines} lines)`);
        }
        const was = await oldLength(file, maxEditBytes);
        const backup = backups ? `\n${await backUp(file)}` : "";
        await rewrite(file, content);
        return textResult(`Replaced ${path}: ${lines} lines (it had ${was})${backup}`);
      });
    },
  });
}

/** Runs `use` with the open file, closing it and its folder after. */
async function withFile<T>(file: Writable, use: () => Promise<T>): Promise<T> {
  try {
    return await use();
  } catch (error) {
    throw fsFailure(error, file.path);
  } finally {
    await closeWritable(file);
  }
}

/** Something is at `path` (a symlink to nothing is nothing). */
async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Refused before anything is opened or made: content larger than `limit` bytes. */
function checkSize(path: string, content: string, limit: number): void {
  const bytes = Buffer.byteLength(content);
  if (bytes > limit) {
    throw new GaggleError("LIMIT_REACHED", `the new content of ${path} has ${bytes} bytes, over ${limit} ([virtual.workspace] max_edit_bytes)`, {
      hint: "write it in parts, or with Bash",
    });
  }
}

/**
 * How long the file Replace overwrites was: its lines when it is at most `limit` bytes (the most Edit reads), else
 * its bytes, so a huge file is not read only to be counted.
 */
async function oldLength(file: Writable, limit: number): Promise<string> {
  const { size } = file.stat;
  return size > limit ? `${size} bytes` : String(lineCount(await file.handle.readFile("utf8")));
}

/** The open file's text; refused when it is binary or larger than `limit` bytes. */
async function readText(file: Writable, limit: number): Promise<string> {
  const { size } = file.stat;
  if (size > limit) {
    throw new GaggleError("LIMIT_REACHED", `${file.path} has ${size} bytes, over ${limit} ([virtual.workspace] max_edit_bytes)`, {
      hint: "edit it with Bash (sed, a script), or raise max_edit_bytes",
    });
  }
  const data = await file.handle.readFile();
  const kind = kindOf(data);
  if (kind.kind !== "text") {
    const type = kind.kind === "image" ? kind.mimeType : kind.type;
    throw new GaggleError("INVALID_ARGS", `${file.path} is a binary file (${type}), which Edit does not change`, { hint: "change it with Bash" });
  }
  return data.toString("utf8");
}

/** Where `needle` starts in `haystack`, each match after the end of the one before (as strings.Count counts). */
function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

/** The 1-based line of each index (ascending). */
function linesOf(text: string, indexes: number[]): number[] {
  let line = 1;
  let next = text.indexOf("\n");
  return indexes.map((index) => {
    while (next !== -1 && next < index) {
      line++;
      next = text.indexOf("\n", next + 1);
    }
    return line;
  });
}

function lineAt(text: string, index: number): number {
  return linesOf(text, [index])[0]!;
}

function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function editAnswer(path: string, after: string, start: number, oldString: string, newString: string): string {
  const oldLines = oldString.split("\n").length;
  const newLines = newString.split("\n").length;
  const lines = after.split("\n");
  // A final newline ends the last line; it does not begin another.
  if (after.endsWith("\n")) lines.pop();
  const end = start + newLines - 1;
  const shownEnd = Math.min(end + CONTEXT, start - CONTEXT + MAX_SHOWN - 1);
  const range = (from: number, to: number) => (from === to ? `line ${from}` : `lines ${from}-${to}`);
  const cut = shownEnd < end + CONTEXT ? `\n[the rest of the new text, to line ${end}, is not shown]` : "";
  return `Edited ${path}: ${range(start, start + oldLines - 1)} became ${range(start, end)}.\n${numberedRange(lines, start - CONTEXT, shownEnd)}${cut}`;
}
