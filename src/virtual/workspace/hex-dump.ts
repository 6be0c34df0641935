// Bytes as `hexdump -C` prints them: the offset, sixteen bytes in hex (two groups of eight), the same as characters.

/** Bytes per line, as hexdump -C writes them. */
const WIDTH = 16;

/**
 * hexdump -C's output for `bytes`, byte for byte: a line that repeats the one before is written as one `*`, as
 * hexdump does unless -v, and the last line is the offset past the end (nothing at all for no bytes).
 */
export function hexDump(bytes: Uint8Array): string {
  if (bytes.length === 0) return "";
  const out: string[] = [];
  let previous: string | undefined;
  let squeezed = false;
  for (let at = 0; at < bytes.length; at += WIDTH) {
    const row = bytes.subarray(at, at + WIDTH);
    const hex = hexOf(row);
    // Only a full row can repeat: a short last row always differs from the one before.
    if (row.length === WIDTH && hex === previous) {
      if (!squeezed) out.push("*");
      squeezed = true;
      continue;
    }
    previous = hex;
    squeezed = false;
    out.push(`${offset(at)}  ${hex.padEnd(WIDTH * 3 + 1)} |${charsOf(row)}|`);
  }
  out.push(offset(bytes.length));
  return out.join("\n");
}

function offset(at: number): string {
  return at.toString(16).padStart(8, "0");
}

/** "7f 45 4c 46 02 01 01 00  00 00 ...": each byte and a space, one more space after the eighth. */
function hexOf(row: Uint8Array): string {
  let hex = "";
  row.forEach((byte, i) => (hex += `${byte.toString(16).padStart(2, "0")} ${i === 7 ? " " : ""}`));
  return hex;
}

/** Printable ASCII as itself, every other byte as `.`. */
function charsOf(row: Uint8Array): string {
  return String.fromCharCode(...row.map((byte) => (byte >= 0x20 && byte <= 0x7e ? byte : 0x2e)));
}
