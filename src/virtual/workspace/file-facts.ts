// How the file tools write what they tell of a file: its size and permissions (GlobTool's lines), and View's
// include_metadata header.
import type { Stats } from "node:fs";
import { formatBytes } from "../../shared/byte-size.js";
import type { FileKind } from "./file-kind.js";

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
    `Size: ${stat.size} bytes${stat.size >= 1024 ? ` (${formatBytes(stat.size)})` : ""}`,
    `Permissions: ${permissions(stat.mode)} (${(stat.mode & 0o7777).toString(8).padStart(4, "0")})`,
    `Modified: ${stat.mtime.toISOString()}`,
    `Kind: ${kindName}`,
  ].join("\n");
}
