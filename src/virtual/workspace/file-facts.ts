// How the file tools write what they tell of a file: its size and permissions (GlobTool's lines), and View's
// include_metadata header.
import type { Stats } from "node:fs";
import type { FileKind } from "./file-kind.js";

/** 28 B, 1.5 KB, 3.2 MB. */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** As ls -l writes them: -rwxr-xr-x. */
export function permissions(mode: number): string {
  const bits = "rwxrwxrwx";
  return "-" + [...bits].map((char, i) => (mode & (1 << (8 - i)) ? char : "-")).join("");
}

/** View's header: the path, size, permissions (with the octal mode, which holds setuid and sticky bits too), modification time and kind. */
export function metadataHeader(path: string, stat: Stats, kind: FileKind): string {
  const kindName = kind.kind === "text" ? "text" : kind.kind === "image" ? kind.mimeType : `${kind.type} (binary)`;
  return [
    `File: ${path}`,
    `Size: ${stat.size} bytes${stat.size >= 1024 ? ` (${humanSize(stat.size)})` : ""}`,
    `Permissions: ${permissions(stat.mode)} (${(stat.mode & 0o7777).toString(8).padStart(4, "0")})`,
    `Modified: ${stat.mtime.toISOString()}`,
    `Kind: ${kindName}`,
  ].join("\n");
}
