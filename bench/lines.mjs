// Owns the baseline hops' reading of a stream as lines: both relays that read messages split them the same way, so
// that they differ only in what they do with each line.

/** Calls `each` with every line of `from` (utf8, without its "\n"), as soon as the line is complete. */
export function eachLine(from, each) {
  let partial = "";
  from.setEncoding("utf8").on("data", (chunk) => {
    let start = 0;
    let newline;
    while ((newline = chunk.indexOf("\n", start)) !== -1) {
      const line = partial + chunk.slice(start, newline);
      partial = "";
      start = newline + 1;
      each(line);
    }
    partial += chunk.slice(start);
  });
}
