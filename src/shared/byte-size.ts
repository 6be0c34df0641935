// A byte count as people read it, for the sizes tools answer with (the workspace's file facts, goose's transcripts).

/** 28 B, 1.5 KB, 3.2 MB, 1.1 GB: one decimal, in 1024s. */
export function formatBytes(bytes: number): string {
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
