// Owns fs/read_text_file and fs/write_text_file as gaggle answers them for one session, and the place they reach:
// every path confined to the session's roots, and opened by descriptor, with the workspace child's checks.
import { isAbsolute } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { acpLoaded } from "./acp-sdk.js";
import { GaggleError } from "../../shared/errors.js";
import { closeQuietly, closeWritable, openToRead, openToWrite, rewrite } from "../workspace/opened.js";
import type { Place } from "../workspace/place.js";
import { confine, describeRoots, isInside, type CallRoots } from "../workspace/roots.js";

/** Largest file an agent reads or writes through gaggle. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;

export async function readTextFile(place: Place, request: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse> {
  const path = await place.confine(absolute(request.path));
  const opened = await missingAsNotFound(path, () => openToRead(place, path));
  try {
    if (opened.stat.size > MAX_FILE_BYTES) {
      throw new GaggleError("LIMIT_REACHED", `${path} has ${opened.stat.size} bytes, over the ${MAX_FILE_BYTES} an agent reads through gaggle`, {
        hint: "read a part of it with line and limit after splitting it, or through a terminal",
      });
    }
    // Read through the handle the workspace's checks opened; the event loop answers others meanwhile.
    const text = await opened.handle.readFile("utf8");
    if (request.line == null && request.limit == null) return { content: text };
    const lines = text.split("\n");
    const from = Math.max((request.line ?? 1) - 1, 0);
    const to = request.limit == null ? lines.length : from + Math.max(request.limit, 0);
    return { content: lines.slice(from, to).join("\n") };
  } finally {
    await closeQuietly(opened);
  }
}

export async function writeTextFile(place: Place, request: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse> {
  const path = await place.confine(absolute(request.path));
  if (Buffer.byteLength(request.content) > MAX_FILE_BYTES) {
    throw new GaggleError("LIMIT_REACHED", `the content for ${path} is over the ${MAX_FILE_BYTES} bytes an agent writes through gaggle`);
  }
  const file = await openToWrite(place, path, { create: "either", parents: true });
  try {
    await rewrite(file, request.content);
  } finally {
    await closeWritable(file);
  }
  return {};
}

/**
 * A file that is not there is ACP's resource-not-found error (-32002), which agents take for "no such file" (a write
 * tool reads the file first to learn whether it creates it); other failures keep gaggle's words.
 */
async function missingAsNotFound<T>(path: string, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (error instanceof GaggleError && error.code === "NOT_FOUND") throw acpLoaded().RequestError.resourceNotFound(path);
    throw error;
  }
}

/** ACP paths are absolute: a relative one is refused rather than guessed at. */
function absolute(path: string): string {
  if (isAbsolute(path)) return path;
  throw new GaggleError("INVALID_ARGS", `"${path}" is not an absolute path; the Agent Client Protocol names files by absolute paths`);
}

/** Where a session's agent may reach: its roots (named by `source` in refusals), relative paths from `cwd`. */
export function sessionPlace(source: string, cwd: string, roots: CallRoots): Place {
  return {
    cwd,
    confine: (path) => confine(path, cwd, roots, source),
    inside: (real) => isInside(real, roots),
    roots: describeRoots(roots),
  };
}

/** Which of `paths` (relative ones from the place's folder) lie outside its roots, symlinks followed. */
export async function outsideOf(place: Place, paths: string[]): Promise<{ paths: string[]; roots: string }> {
  const outside = await Promise.all(
    paths.map((path) =>
      place.confine(path).then(
        () => false,
        () => true,
      ),
    ),
  );
  return { paths: paths.filter((_, i) => outside[i]), roots: place.roots };
}
