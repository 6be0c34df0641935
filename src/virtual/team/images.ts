// Owns checking image_paths: each must exist under the folders images may come from, be a file, and start like an
// image (PNG, JPEG, GIF, WebP, BMP).
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { GaggleError } from "../../shared/errors.js";
import { canonical, isUnder } from "../../shared/fs-checks.js";

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
export function checkImages(paths: readonly string[], place: ImagePlace): string[] {
  const roots = [...new Set(place.roots.map(canonical))];
  return paths.map((path, index) => {
    const absolute = resolve(place.cwd, path);
    const where = `image_paths[${index}] "${path}"${absolute === path ? "" : ` (${absolute})`}`;
    let size: number;
    try {
      const stat = statSync(absolute);
      if (!stat.isFile()) throw new GaggleError("INVALID_ARGS", `${where} is not a file`);
      size = stat.size;
    } catch (error) {
      if (error instanceof GaggleError) throw error;
      throw new GaggleError("INVALID_ARGS", `${where} does not exist`);
    }
    const real = canonical(absolute);
    if (!roots.some((root) => isUnder(real, root))) {
      throw new GaggleError("INVALID_ARGS", `${where} is outside the folders team images may come from: ${roots.join(", ")}`, {
        hint: "copy the image into your working directory (or the goose child's cwd) and give that path",
      });
    }
    const head = readHead(real, Math.min(size, 16));
    if (!SIGNATURES.some((signature) => signature.test(head))) {
      throw new GaggleError("INVALID_ARGS", `${where} is not an image: expected ${SIGNATURES.map((s) => s.kind).join(", ")}`);
    }
    return real;
  });
}

function readHead(path: string, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  const fd = openSync(path, "r");
  try {
    readSync(fd, buffer, 0, length, 0);
  } finally {
    closeSync(fd);
  }
  return buffer;
}
