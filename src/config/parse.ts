// Owns turning config file text into a plain document: format choice, syntax errors with line:col, JSON duplicate keys.
import { extname } from "node:path";
import { TomlError, parse as parseToml } from "smol-toml";
import { ConfigError, type ConfigIssue, formatPath } from "./errors.js";
import { jsoncAsJson, nestsDeeperThan } from "../shared/json-text.js";

export type ConfigFormat = "toml" | "json";

export interface ParsedDocument {
  format: ConfigFormat;
  doc: unknown;
  /** Problems that do not stop parsing (JSON duplicate keys, reserved keys); reported together with validation issues. */
  issues: ConfigIssue[];
}

/**
 * `.toml` and `.json` (`.jsonc`) decide by extension; any other name is guessed from content (`{` first means JSON;
 * for JSONC, first after any comments).
 */
export function formatOf(file: string, text: string, options: ParseOptions = {}): { format: ConfigFormat; guessed: boolean } {
  const ext = extname(file).toLowerCase();
  if (ext === ".toml") return { format: "toml", guessed: false };
  if (ext === ".json" || ext === ".jsonc") return { format: "json", guessed: false };
  const body = stripBom(text);
  const first = options.jsonc ? jsoncAsJson(body).json : body;
  return { format: first.trimStart().startsWith("{") ? "json" : "toml", guessed: true };
}

/**
 * The other format, when text named for one plainly is the other: a Claude Desktop JSON pasted into a `.toml`
 * (an object first), or TOML in a `.json` (a comment, a table header or a `key =` first).
 */
function readsAsOther(format: ConfigFormat, body: string): ConfigFormat | undefined {
  const first = body.trimStart();
  if (format === "toml") return first.startsWith("{") ? "json" : undefined;
  const line = first.split("\n", 1)[0] ?? "";
  return /^(#|\[\[?[A-Za-z0-9_."-]+\]\]?\s*$|[A-Za-z0-9_-]+\s*=)/.test(line) ? "toml" : undefined;
}

/** Deeper than any setting of gaggle's nests, shallow enough that no reader of the document runs out of stack. */
const MAX_DEPTH = 64;

export interface ParseOptions {
  /** Read JSON as JSONC, past `//` and `/* *\/` comments and trailing commas: for the files whose clients read them so. */
  jsonc?: boolean;
}

/** Parses `text` read from `file` (absolute); throws ConfigError (code "syntax") naming line and column. */
export function parseDocument(text: string, file: string, options: ParseOptions = {}): ParsedDocument {
  const { format, guessed } = formatOf(file, text, options);
  const body = stripBom(text);
  const other = guessed ? undefined : readsAsOther(format, body);
  const note = guessed
    ? ` (format guessed from content; name the file .toml or .json)`
    : other
      ? ` (the file reads as ${other.toUpperCase()}: name it .${other})`
      : "";
  const syntaxError = (line: number, col: number, message: string, cause: unknown): ConfigError => {
    const issue = { path: "", at: { line, col }, message: `${format.toUpperCase()} syntax error${note}: ${message}` };
    return new ConfigError(file, [issue], "syntax", { cause });
  };
  if (format === "toml") {
    try {
      const doc = parseToml(body);
      return { format, doc, issues: reservedKeys(doc) };
    } catch (err) {
      if (!(err instanceof TomlError)) throw err;
      const first = err.message.split("\n")[0] ?? err.message;
      const message = first.replace(/^Invalid TOML document: /, "");
      throw syntaxError(err.line, err.column, explainToml(message, body, offsetOf(body, err.line, err.column)), err);
    }
  }
  // JSONC read as JSON of the same length: every offset below names the same place in the file's own text.
  const { json, unclosedCommentAt } = options.jsonc ? jsoncAsJson(body) : { json: body };
  if (unclosedCommentAt !== undefined) {
    const { line, col } = lineCol(body, unclosedCommentAt);
    throw syntaxError(line, col, "a comment opened here is not closed: end it with */", undefined);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const at = jsonErrorOffset(err.message, json);
    const comma = trailingComma(json, at);
    if (comma !== undefined) {
      const { line, col } = lineCol(json, comma);
      throw syntaxError(line, col, `trailing comma? JSON allows no comma before "${json[at]}"`, err);
    }
    const { line, col } = lineCol(json, at);
    if (json.startsWith("//", at) || json.startsWith("/*", at)) throw syntaxError(line, col, "JSON allows no comments: remove it", err);
    throw syntaxError(line, col, cleanJsonMessage(err.message), err);
  }
  // The checks below walk the document level by level: a depth no config has is refused before they start.
  if (nestsDeeperThan(json, MAX_DEPTH)) {
    throw new ConfigError(
      file,
      [{ path: "", at: { line: 1, col: 1 }, message: `JSON nested more than ${MAX_DEPTH} levels deep; no gaggle setting nests that far` }],
      "syntax",
    );
  }
  const issues = scanJson(json).duplicates.map(({ path, at, firstAt }): ConfigIssue => {
    const here = lineCol(json, at);
    const first = lineCol(json, firstAt);
    return {
      path: formatPath(path),
      message: `duplicate key at ${here.line}:${here.col} (first at ${first.line}:${first.col}); JSON would keep only the last one`,
    };
  });
  return { format, doc, issues: [...issues, ...reservedKeys(doc)] };
}

/**
 * Every `__proto__` key in the document. Both parsers keep it as a key, but no plain object downstream can
 * hold it as one (zod drops it, an assignment sets the prototype instead), so it would vanish without a word:
 * a server of that name would not be there. Refused instead, wherever it is.
 */
function reservedKeys(value: unknown, path: PropertyKey[] = []): ConfigIssue[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => reservedKeys(item, [...path, index]));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const here = [...path, key];
    const issue = { path: formatPath(here), message: '"__proto__" cannot be a name or key here (JavaScript objects reserve it); rename it' };
    return [...(key === "__proto__" ? [issue] : []), ...reservedKeys(item, here)];
  });
}

function stripBom(text: string): string {
  return text.startsWith("\uFEFF") ? text.slice(1) : text;
}

/** V8 names the spot as `(line X column Y)` (Node 22+) or `at position N`; some messages name neither. */
function jsonErrorOffset(message: string, text: string): number {
  const lc = /\(line (\d+) column (\d+)\)/.exec(message);
  if (lc) return offsetOf(text, Number(lc[1]), Number(lc[2]));
  const pos = /at position (\d+)/.exec(message);
  return pos ? Number(pos[1]) : (scanJson(text).errorAt ?? text.length);
}

/** The offset of the comma a `}` or `]` at `at` follows, whitespace between: the commonest JSON mistake, which V8 words otherwise. */
function trailingComma(text: string, at: number): number | undefined {
  if (text[at] !== "}" && text[at] !== "]") return undefined;
  let before = at - 1;
  while (before >= 0 && /\s/.test(text[before]!)) before--;
  return text[before] === "," ? before : undefined;
}

/**
 * smol-toml's message, with what to do for the mistakes it words by their symptom: a string left open (it reports
 * the line's end as a control character in the string), a string written without quotes (an "invalid value"), a
 * table header left open (an "illegal character in key" at the line's end), and a key or table written twice,
 * named.
 */
function explainToml(message: string, text: string, at: number): string {
  const endOfLine = at >= text.length || text[at] === "\n" || text[at] === "\r";
  if (message === "control characters are not allowed in strings" && endOfLine)
    return 'a string is not closed before the end of its line: end it with the quote it opens with, or write text of several lines between """ and """';
  const word = message === "invalid value" ? /^[A-Za-z_][\w-]*/.exec(text.slice(at, at + 200))?.[0] : undefined;
  if (word !== undefined) return `invalid value: a string needs quotes, as in "${word}"`;
  if (message === "invalid value" || message === "expected comma or end of structure") {
    const open = openStructureAt(text, at);
    if (open !== undefined) {
      const { line, col } = lineCol(text, open.at);
      const [kind, close] = open.bracket === "[" ? ["array", "]"] : ["inline table", "}"];
      const expected = message === "invalid value" ? "a value" : "a comma";
      return `expected ${expected} or ${close} to close the ${kind} opened at ${line}:${col}`;
    }
  }
  const line = lineAround(text, at).trim();
  if (message === "illegal character in key" && endOfLine && line.startsWith("["))
    return `the table header ${line} is not closed: end it with ${line.startsWith("[[") ? "]]" : "]"}`;
  if (message === "trying to redefine an already defined table or value" || message === "trying to redefine an already defined value") {
    const header = /^\[\[?\s*([^\]]*?)\s*\]/.exec(line)?.[1];
    // The position is the key's own, in a line of its own or in an inline table.
    const key = header === undefined ? /^([^=\n]*?)\s*=/.exec(text.slice(at, at + 200))?.[1] : undefined;
    if (header !== undefined) return `the table [${header}] is defined twice: write each table once, with all of its keys`;
    if (key) return `the key ${key} is defined twice in its table: keep one`;
  }
  return message;
}

/**
 * The innermost array or inline table still open at offset `at`, read in one pass that skips strings and comments:
 * a table header opens and closes its bracket on its line, so only a value's brackets stay open.
 */
function openStructureAt(text: string, at: number): { bracket: "[" | "{"; at: number } | undefined {
  const open: Array<{ bracket: "[" | "{"; at: number }> = [];
  let i = 0;
  while (i < at) {
    const c = text[i]!;
    if (c === "#") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end;
    } else if (c === '"' || c === "'") {
      const triple = text.startsWith(c.repeat(3), i);
      const quote = triple ? c.repeat(3) : c;
      i += quote.length;
      // A basic string's backslash escapes the next character; a literal string has no escapes.
      while (i < text.length && !text.startsWith(quote, i) && (triple || text[i] !== "\n")) i += c === '"' && text[i] === "\\" ? 2 : 1;
      i += quote.length;
    } else {
      if (c === "[" || c === "{") open.push({ bracket: c, at: i });
      else if (c === "]" || c === "}") open.pop();
      i++;
    }
  }
  return open.at(-1);
}

/** The line of `text` that holds offset `at`, at most 200 characters of it. */
function lineAround(text: string, at: number): string {
  const start = text.lastIndexOf("\n", at - 1) + 1;
  const end = text.indexOf("\n", start);
  return text.slice(start, Math.min(end < 0 ? text.length : end, start + 200));
}

function cleanJsonMessage(message: string): string {
  return message
    .replace(/^(Unexpected token .+?), (?:\.\.\.)?".*" is not valid JSON$/s, "$1")
    .replace(/ (?:in JSON )?at position \d+/, "")
    .replace(/ \(line \d+ column \d+\)/, "");
}

function offsetOf(text: string, line: number, col: number): number {
  let offset = 0;
  for (let at = 1; at < line; at++) offset = text.indexOf("\n", offset) + 1;
  return offset + col - 1;
}

export function lineCol(text: string, offset: number): { line: number; col: number } {
  const lines = text.slice(0, offset).split("\n");
  return { line: lines.length, col: (lines[lines.length - 1] ?? "").length + 1 };
}

interface JsonScan {
  /** Offset of the first syntax error, if any. */
  errorAt?: number;
  duplicates: { path: PropertyKey[]; at: number; firstAt: number }[];
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * A JSON walker that keeps what JSON.parse throws away: where each key is, so duplicate keys
 * (which JSON.parse silently resolves to the last one) can be reported, and where the first
 * syntax error is when V8's message does not say.
 */
function scanJson(text: string): JsonScan {
  const duplicates: JsonScan["duplicates"] = [];
  let i = 0;
  const stop = new Error("stop");
  const fail = (): never => {
    throw stop;
  };
  const ws = (): void => {
    while (i < text.length && " \t\n\r".includes(text.charAt(i))) i++;
  };
  const string = (): string => {
    const start = i++;
    while (i < text.length) {
      const c = text.charAt(i);
      if (c === '"') return String(JSON.parse(text.slice(start, ++i)));
      if (c < " ") fail();
      if (c === "\\") {
        const e = text.charAt(++i);
        if (e === "u" && !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail();
        if (e === "" || !'"\\/bfnrtu'.includes(e)) fail();
        i += e === "u" ? 4 : 0;
      }
      i++;
    }
    return fail();
  };
  const value = (path: PropertyKey[]): void => {
    ws();
    const c = text.charAt(i);
    if (c === "{") return object(path);
    if (c === "[") return array(path);
    if (c === '"') return void string();
    const word = ["true", "false", "null"].find((w) => w.startsWith(c));
    if (word !== undefined) {
      // Like V8, blame the first character that breaks the word ("tru}" -> the "}").
      for (const expectedChar of word) {
        if (text.charAt(i) !== expectedChar) fail();
        i++;
      }
      return;
    }
    NUMBER.lastIndex = i;
    if (NUMBER.test(text)) return void (i = NUMBER.lastIndex);
    fail();
  };
  const object = (path: PropertyKey[]): void => {
    i++;
    ws();
    if (text.charAt(i) === "}") return void i++;
    const seen = new Map<string, number>();
    for (;;) {
      ws();
      if (text.charAt(i) !== '"') fail();
      const at = i;
      const key = string();
      const firstAt = seen.get(key);
      if (firstAt === undefined) seen.set(key, at);
      else duplicates.push({ path: [...path, key], at, firstAt });
      ws();
      if (text.charAt(i) !== ":") fail();
      i++;
      value([...path, key]);
      ws();
      if (text.charAt(i) !== "," && text.charAt(i) !== "}") fail();
      if (text.charAt(i++) === "}") return;
    }
  };
  const array = (path: PropertyKey[]): void => {
    i++;
    ws();
    if (text.charAt(i) === "]") return void i++;
    for (let index = 0; ; index++) {
      value([...path, index]);
      ws();
      if (text.charAt(i) !== "," && text.charAt(i) !== "]") fail();
      if (text.charAt(i++) === "]") return;
    }
  };
  try {
    value([]);
    ws();
    if (i < text.length) fail();
    return { duplicates };
  } catch (err) {
    if (err !== stop) throw err;
    return { errorAt: Math.min(i, text.length), duplicates };
  }
}
