// View: a text file in `cat -n` form (or plain) from an offset or around a piece of text, an image as MCP image
// content, a binary file refused with its type or shown as a hex dump; a metadata header on request.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { GaggleError } from "../../shared/errors.js";
import { textResult } from "../../shared/tool-results.js";
import { defineTool, type VirtualTool } from "../virtual-child.js";
import { metadataHeader } from "./file-facts.js";
import { headOf, kindOf } from "./file-kind.js";
import { fsFailure } from "./fs-errors.js";
import { hexDump } from "./hex-dump.js";
import { readLines } from "./line-reader.js";
import { closeQuietly, openToRead, type Opened } from "./opened.js";
import { MAX_LINE_CHARS, numbered, plain, type LineStyle } from "./numbered.js";
import type { Workspace } from "./place.js";
import { viewSection } from "./section.js";

const DEFAULT_LINES = 2000;
/** include_hex_dump shows this many bytes from the start of a binary file. */
const HEX_DUMP_BYTES = 1024;

export function viewTool(workspace: Workspace): VirtualTool {
  const { maxImageBytes } = workspace.settings;
  return defineTool({
    name: "View",
    title: "Read a file",
    description:
      `Reads a file under the allowed roots. Text comes back as \`cat -n\` prints it (line numbers from 1; show_line_numbers: ` +
      `false for the plain lines), ${DEFAULT_LINES} lines from the start unless offset and limit say otherwise, lines longer ` +
      `than ${MAX_LINE_CHARS} characters cut. find_section shows only the part around a piece of text: in Markdown the ` +
      "section whose heading holds it, elsewhere the first line holding it with the block it opens. Images (PNG, JPEG, GIF, " +
      "WebP) come back as images you can see. Other binary files are refused, saying what they are, unless include_hex_dump " +
      "asks for a hex dump of their first bytes. include_metadata adds the size, permissions, modification time and kind " +
      "before the content. The path may be absolute or relative to the shell's working directory.",
    input: z.strictObject({
      file_path: z.string().min(1).describe("The file to read: absolute, or relative to the shell's working directory"),
      offset: z
        .int()
        .min(0)
        .describe("Lines to skip: 0 starts at line 1, 100 at line 101 (default 0); with find_section, where the search starts")
        .optional(),
      limit: z.int().min(1).describe(`Lines to read (default ${DEFAULT_LINES}); with find_section, the most of the section shown`).optional(),
      show_line_numbers: z.boolean().describe("Number the lines as cat -n does (default true); false gives the plain lines").optional(),
      include_metadata: z
        .boolean()
        .describe("Start with the file's path, size, permissions, modification time (ISO 8601) and kind (default false)")
        .optional(),
      include_hex_dump: z
        .boolean()
        .describe(
          `For a binary file: answer with a hex dump (as hexdump -C) of its first ${HEX_DUMP_BYTES} bytes instead of refusing it (default false)`,
        )
        .optional(),
      find_section: z
        .string()
        .min(1)
        .describe(
          "Show only the part around this text (either case): in Markdown the section whose heading holds it, up to the next " +
            "heading of its level or higher; elsewhere the first line holding it, a few lines before, and the block it opens",
        )
        .optional(),
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async (args, ctx) => {
      const { file_path, offset = 0, limit = DEFAULT_LINES, show_line_numbers = true, include_metadata = false } = args;
      const place = await workspace.place(ctx);
      const path = await place.confine(file_path);
      const file = await openToRead(place, path);
      try {
        return await view(file, args, { offset, limit, style: show_line_numbers ? numbered : plain, include_metadata });
      } catch (error) {
        throw fsFailure(error, path);
      } finally {
        await closeQuietly(file);
      }
    },
  });

  async function view(
    file: Opened,
    args: { include_hex_dump?: boolean | undefined; find_section?: string | undefined },
    { offset, limit, style, include_metadata }: { offset: number; limit: number; style: LineStyle; include_metadata: boolean },
  ): Promise<CallToolResult> {
    const { path, stat } = file;
    const { size } = stat;
    const head = await headOf(file.handle);
    const kind = kindOf(head);
    const header = include_metadata ? `${metadataHeader(path, stat, kind)}\n\n` : "";
    if (kind.kind === "binary") {
      if (args.include_hex_dump) {
        const shown = head.subarray(0, HEX_DUMP_BYTES);
        const which = shown.length < size ? `its first ${shown.length} bytes` : `all ${size} bytes`;
        return textResult(`${header}${path} is a binary file (${kind.type}, ${size} bytes); ${which}, as hexdump -C shows them:\n${hexDump(shown)}`);
      }
      // Asked for its metadata, a binary file gets that answer; asked for its content, it is refused.
      if (include_metadata)
        return textResult(`${header}[a binary file: pass include_hex_dump: true to see its first ${HEX_DUMP_BYTES} bytes in hex]`);
      throw new GaggleError("INVALID_ARGS", `${path} is a binary file (${kind.type}, ${size} bytes): View shows text and images`, {
        hint: `pass include_hex_dump: true for a hex dump of its first ${HEX_DUMP_BYTES} bytes, or look inside it with Bash (file, unzip -l, ...)`,
      });
    }
    if (kind.kind === "image") {
      if (size > maxImageBytes) {
        throw new GaggleError("LIMIT_REACHED", `${path} is an image of ${size} bytes, over ${maxImageBytes} ([virtual.workspace] max_image_bytes)`, {
          hint: "make a smaller copy with Bash (for example with ImageMagick's convert) and view that",
        });
      }
      return {
        content: [
          { type: "text", text: include_metadata ? header.trimEnd() : `${path} (${kind.mimeType}, ${size} bytes)` },
          { type: "image", data: (await file.handle.readFile()).toString("base64"), mimeType: kind.mimeType },
        ],
      };
    }
    const body =
      args.find_section === undefined
        ? await linesOf(file, offset, limit, style)
        : await viewSection(file.handle, path, size, args.find_section, offset, limit, style);
    return textResult(header + body);
  }
}

async function linesOf(file: Opened, offset: number, limit: number, style: LineStyle): Promise<string> {
  const { lines, seen, more } = await readLines(file.handle, offset, limit, MAX_LINE_CHARS);
  if (seen === 0) return "(empty file)";
  if (lines.length === 0) {
    throw new GaggleError("INVALID_ARGS", `offset ${offset} is past the end of ${file.path}, which has ${seen} lines`, {
      hint: `give an offset below ${seen}`,
    });
  }
  const last = offset + lines.length;
  const note = more ? `\n[lines ${offset + 1}-${last} shown; more follow: pass offset ${last} to read on]` : "";
  return lines.map((line, i) => style(offset + i + 1, line.text, line.length)).join("\n") + note;
}
