// Owns checking image_paths: each must exist under the folders images may come from, be a file, and start like an
// image (PNG, JPEG, GIF, WebP, BMP).
import { open, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { GaggleError } from "../../shared/errors.js";
import { isUnder } from "../../shared/fs-checks.js";
import { canonical } from "../../shared/fs-probes.js";

/** Where a sender's images may come from, and where its relative paths start. */
export interface ImagePlace {
  /** The sender's working directory. */
  cwd: string;
  /** Absolute folders an image must be inside, symlinks resolved: the goose child's cwd and the sender's. */
  roots: readonly string[];
}

const SIGNATURES: Array<{ kind: string; test(head: Buffer): boolean }> = [
  { kind: "PNG", test: (head) => head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { kind: "JPEG", test: (head) => head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff },
  { kind: "GIF", test: (head) => /^GIF8[79]a/.test(head.subarray(0, 6).toString("latin1")) },
  { kind: "WebP", test: (head) => head.subarray(0, 4).toString("latin1") === "RIFF" && head.subarray(8, 12).toString("latin1") === "WEBP" },
  { kind: "BMP", test: (head) => head.subarray(0, 2).toString("latin1") === "BM" },
];

/** Absolute paths (symlinks resolved), in the order given; relative ones start from the sender's working directory. */
export async function checkImages(paths: readonly string[], place: ImagePlace): Promise<string[]> {
  const roots = [...new Set(await Promise.all(place.roots.map(canonical)))];
  const checked: string[] = [];
  // One at a time, so that the first bad path in the order given is the one named.
  for (const [index, path] of paths.entries()) checked.push(await checkImage(path, index, place.cwd, roots));
  return checked;
}

async function checkImage(path: string, index: number, cwd: string, roots: string[]): Promise<string> {
  const absolute = resolve(cwd, path);
  const where = `image_paths[${index}] "${path}"${absolute === path ? "" : ` (${absolute})`}`;
  let size: number;
  try {
    const found = await stat(absolute);
    if (!found.isFile()) throw new GaggleError("INVALID_ARGS", `${where} is not a file`);
    size = found.size;
  } catch (error) {
    if (error instanceof GaggleError) throw error;
    throw new GaggleError("INVALID_ARGS", `${where} does not exist`);
  }
  const real = await canonical(absolute);
  if (!roots.some((root) => isUnder(real, root))) {
    throw new GaggleError("INVALID_ARGS", `${where} is outside the folders team images may come from: ${roots.join(", ")}`, {
      hint: "copy the image into your working directory (or the goose child's cwd) and give that path",
    });
  }
  const head = await readHead(real, Math.min(size, 16));
  if (!SIGNATURES.some((signature) => signature.test(head))) {
    throw new GaggleError("INVALID_ARGS", `${where} is not an image: expected ${SIGNATURES.map((s) => s.kind).join(", ")}`);
  }
  return real;
}

async function readHead(path: string, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const file = await open(path, "r");
  try {
    await file.read(buffer, 0, length, 0);
  } finally {
    await file.close();
  }
  return buffer;
}
