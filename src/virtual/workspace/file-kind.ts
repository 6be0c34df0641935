// What a file holds, told from its first bytes: an image a client can show, another binary type by name, or text.
import type { FileHandle } from "node:fs/promises";

export type FileKind = { kind: "text" } | { kind: "image"; mimeType: string } | { kind: "binary"; type: string };

/** Bytes read to tell a file's kind: as git and grep do, a NUL among them makes it binary. */
export const SNIFF_BYTES = 8000;

/** Signatures at offset 0 (or `at`), as `file` reads them; images first, the ones MCP clients show. */
const SIGNATURES: Array<{ bytes: number[] | string; at?: number; image?: string; type: string }> = [
  { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], image: "image/png", type: "PNG image" },
  { bytes: [0xff, 0xd8, 0xff], image: "image/jpeg", type: "JPEG image" },
  { bytes: "GIF87a", image: "image/gif", type: "GIF image" },
  { bytes: "GIF89a", image: "image/gif", type: "GIF image" },
  { bytes: "WEBP", at: 8, image: "image/webp", type: "WebP image" },
  { bytes: "BM", type: "BMP image" },
  { bytes: [0x7f, 0x45, 0x4c, 0x46], type: "ELF executable or library" },
  { bytes: "MZ", type: "Windows executable" },
  { bytes: [0xcf, 0xfa, 0xed, 0xfe], type: "Mach-O executable" },
  { bytes: [0xca, 0xfe, 0xba, 0xbe], type: "Java class or Mach-O universal binary" },
  { bytes: [0x00, 0x61, 0x73, 0x6d], type: "WebAssembly module" },
  { bytes: "%PDF-", type: "PDF document" },
  { bytes: [0x50, 0x4b, 0x03, 0x04], type: "Zip archive (or jar, docx, xlsx, odt)" },
  { bytes: [0x1f, 0x8b], type: "gzip-compressed data" },
  { bytes: "BZh", type: "bzip2-compressed data" },
  { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], type: "xz-compressed data" },
  { bytes: [0x28, 0xb5, 0x2f, 0xfd], type: "zstd-compressed data" },
  { bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], type: "7-zip archive" },
  { bytes: "ustar", at: 257, type: "tar archive" },
  { bytes: "SQLite format 3\0", type: "SQLite database" },
  { bytes: "OggS", type: "Ogg audio or video" },
  { bytes: "ID3", type: "MP3 audio" },
  { bytes: "fLaC", type: "FLAC audio" },
  { bytes: "WAVE", at: 8, type: "WAV audio" },
  { bytes: "ftyp", at: 4, type: "MP4 or QuickTime video" },
];

export function kindOf(head: Buffer): FileKind {
  for (const { bytes, at = 0, image, type } of SIGNATURES) {
    const want = typeof bytes === "string" ? Buffer.from(bytes, "latin1") : Buffer.from(bytes);
    if (head.length >= at + want.length && head.subarray(at, at + want.length).equals(want)) {
      return image ? { kind: "image", mimeType: image } : { kind: "binary", type };
    }
  }
  return head.subarray(0, SNIFF_BYTES).includes(0) ? { kind: "binary", type: "binary data (it holds NUL bytes)" } : { kind: "text" };
}

/** The first SNIFF_BYTES of the open file. */
export async function headOf(handle: FileHandle): Promise<Buffer> {
  const buffer = Buffer.alloc(SNIFF_BYTES);
  return buffer.subarray(0, (await handle.read(buffer, 0, SNIFF_BYTES, 0)).bytesRead);
}
