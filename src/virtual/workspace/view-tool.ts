// View: a text file in `cat -n` form from an offset, an image as MCP image content, a binary file refused with its type.
import { createReadStream, readFileSync, statSync } from "node:fs";
import { createInterface } from "node:readline";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { GaggleError } from "../../shared/errors.js";
import { defineTool, type VirtualTool } from "../virtual-child.js";
import { headOf, kindOf } from "./file-kind.js";
import { fsFailure } from "./fs-errors.js";
import { MAX_LINE_CHARS, numbered } from "./numbered.js";
import type { Workspace } from "./place.js";

const DEFAULT_LINES = 2000;

export function viewTool(workspace: Workspace): VirtualTool {
  const { maxImageBytes } = workspace.settings;
  return defineTool({
    name: "View",
    title: "Read a file",
    description:
      `Reads a file under the allowed roots. Text comes back as \`cat -n\` prints it (line numbers from 1), ${DEFAULT_LINES} lines ` +
      `from the start unless offset and limit say otherwise, lines longer than ${MAX_LINE_CHARS} characters cut. Images ` +
      "(PNG, JPEG, GIF, WebP) come back as images you can see. Other binary files are refused, saying what they are. " +
      "The path may be absolute or relative to the shell's working directory.",
    input: z.strictObject({
      file_path: z.string().min(1).describe("The file to read: absolute, or relative to the shell's working directory"),
      offset: z.int().min(0).describe("Lines to skip: 0 starts at line 1, 100 at line 101 (default 0)").optional(),
      limit: z.int().min(1).describe(`Lines to read (default ${DEFAULT_LINES})`).optional(),
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ file_path, offset = 0, limit = DEFAULT_LINES }, ctx) => {
      const path = (await workspace.place(ctx)).confine(file_path);
      let size: number;
      let head: Buffer;
      try {
        const stat = statSync(path);
        if (stat.isDirectory()) throw new GaggleError("INVALID_ARGS", `${path} is a folder, not a file`, { hint: "list it with LS" });
        size = stat.size;
        head = headOf(path);
      } catch (error) {
        throw fsFailure(error, path);
      }
      const kind = kindOf(head);
      if (kind.kind === "binary") {
        throw new GaggleError("INVALID_ARGS", `${path} is a binary file (${kind.type}, ${size} bytes): View shows text and images`, {
          hint: "look inside it with Bash (file, xxd, unzip -l, ...)",
        });
      }
      if (kind.kind === "image") {
        if (size > maxImageBytes) {
          throw new GaggleError(
            "LIMIT_REACHED",
            `${path} is an image of ${size} bytes, over ${maxImageBytes} ([virtual.workspace] max_image_bytes)`,
            {
              hint: "make a smaller copy with Bash (for example with ImageMagick's convert) and view that",
            },
          );
        }
        return {
          content: [
            { type: "text", text: `${path} (${kind.mimeType}, ${size} bytes)` },
            { type: "image", data: readFileSync(path).toString("base64"), mimeType: kind.mimeType },
          ],
        };
      }
      return readLines(path, offset, limit);
    },
  });
}

async function readLines(path: string, offset: number, limit: number): Promise<CallToolResult> {
  const lines: string[] = [];
  let seen = 0;
  let more = false;
  const stream = createReadStream(path, { encoding: "utf8" });
  const reader = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of reader) {
      seen++;
      if (seen <= offset) continue;
      if (lines.length === limit) {
        more = true;
        break;
      }
      lines.push(numbered(seen, line));
    }
  } catch (error) {
    throw fsFailure(error, path);
  } finally {
    reader.close();
    stream.destroy();
  }
  if (seen === 0) return text("(empty file)");
  if (lines.length === 0) {
    throw new GaggleError("INVALID_ARGS", `offset ${offset} is past the end of ${path}, which has ${seen} lines`, {
      hint: `give an offset below ${seen}`,
    });
  }
  const last = offset + lines.length;
  const note = more ? `\n[lines ${offset + 1}-${last} shown; more follow: pass offset ${last} to read on]` : "";
  return text(lines.join("\n") + note);
}

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}
