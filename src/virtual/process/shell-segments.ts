// Splits a shell command into the simple commands a policy checks one by one, or names what makes that impossible.

export type SplitCommand = { segments: string[] } | { unverifiable: string };

/**
 * Follows POSIX sh quoting: nothing is special inside single quotes; inside double quotes only `\`, `$(`
 * and backticks are. Outside quotes, `;`, `&`, `|` and newlines separate commands (so `&&`, `||`, `|&`
 * and `;;` do too), except in the redirections `>&`, `<&` and `>|`. Where sh would see less than this
 * split does (a `#` comment, a heredoc body), the split only ever asks for more segments to be allowed,
 * never fewer. Command substitution, subshells and process substitution run commands this split cannot
 * see, so they are reported rather than split.
 */
export function splitCommand(command: string): SplitCommand {
  const segments: string[] = [];
  let current = "";
  let quote: "'" | '"' | undefined;
  const flush = () => {
    const segment = current.trim().replace(/\s+/g, " ");
    if (segment !== "") segments.push(segment);
    current = "";
  };
  for (let i = 0; i < command.length; i++) {
    const char = command[i]!;
    const next = command[i + 1];
    if (quote === "'") {
      if (char === "'") quote = undefined;
      current += char;
      continue;
    }
    if (char === "\\") {
      // A backslash-newline joins two lines into one; any other escaped character is literal.
      if (next === "\n") i++;
      else if (next !== undefined) {
        current += char + next;
        i++;
      } else current += char;
      continue;
    }
    if (char === "`") return { unverifiable: "backticks (`...`)" };
    if (char === "$" && next === "(") return { unverifiable: "command substitution ($( ))" };
    if (quote === '"') {
      if (char === '"') quote = undefined;
      current += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      current += char;
    } else if (char === "(" || char === ")") {
      const previous = command[i - 1];
      return { unverifiable: previous === "<" || previous === ">" ? "process substitution (<( ) or >( ))" : "a subshell (( ))" };
    } else if (char === "&" && (current.endsWith(">") || current.endsWith("<"))) {
      current += char;
    } else if (char === "|" && current.endsWith(">") && !current.endsWith(">>")) {
      current += char;
    } else if (char === ";" || char === "&" || char === "|" || char === "\n" || char === "\r") {
      flush();
    } else {
      current += char;
    }
  }
  if (quote) return { unverifiable: `an unterminated ${quote === "'" ? "single" : "double"} quote` };
  flush();
  return { segments };
}
