import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { parseDocument } from "../../src/config/parse.js";
import { configError, tempDir } from "./files.js";

const tmp = tempDir();
afterAll(() => tmp.remove());

/** The message of loading `text` from a file called `name`. */
function syntaxMessage(name: string, text: string): { path: string; message: string } {
  const path = tmp.write(name, text);
  const err = configError(() => loadConfig(path, {}));
  expect(err.code).toBe("syntax");
  expect(err.issues).toHaveLength(1);
  expect(err.cause).toBeInstanceOf(Error);
  return { path, message: err.message };
}

describe("TOML syntax errors", () => {
  it("name the file, line and column", () => {
    const { path, message } = syntaxMessage("children_config.toml", `[mcp_servers.echo]\ncommand = "node"\nargs = = []\n`);
    expect(message).toBe(`${path}:3:8: TOML syntax error: invalid value`);
  });

  it("say that a string is not closed, at the end of its line", () => {
    const { path, message } = syntaxMessage("open.toml", `[gateway]\nexpose = "meta\n\n[mcp_servers.echo]\ncommand = "node"\n`);
    expect(message).toBe(
      `${path}:2:15: TOML syntax error: a string is not closed before the end of its line: end it with the quote it opens with, or write text of several lines between """ and """`,
    );
  });

  it("say that a string needs quotes", () => {
    const { path, message } = syntaxMessage("bare.toml", `[gateway]\nexpose = meta\n`);
    expect(message).toBe(`${path}:2:10: TOML syntax error: invalid value: a string needs quotes, as in "meta"`);
  });

  it("name the array or inline table a value or a comma is missing from, and where it opened", () => {
    const truncated = syntaxMessage("truncated.toml", `[mcp_servers.echo]\ncommand = "node"\nargs = [\n`);
    expect(truncated.message).toBe(`${truncated.path}:4:1: TOML syntax error: expected a value or ] to close the array opened at 3:8`);
    const unclosed = syntaxMessage("unclosed.toml", `[mcp_servers.echo]\nargs = [\n  "a # [",\n  'b]'\n\ncommand = "node"\n`);
    expect(unclosed.message).toBe(`${unclosed.path}:6:1: TOML syntax error: expected a comma or ] to close the array opened at 2:8`);
    const table = syntaxMessage("table.toml", `[mcp_servers.echo]\ncommand = "node"\nenv = { A = "1"\n`);
    expect(table.message).toBe(`${table.path}:4:1: TOML syntax error: expected a comma or } to close the inline table opened at 3:7`);
  });

  it("report a key defined twice where the second one is, and name it", () => {
    const { path, message } = syntaxMessage("twice.toml", `[mcp_servers.echo]\ncommand = "a"\ncommand = "b"\n`);
    expect(message).toBe(`${path}:3:1: TOML syntax error: the key command is defined twice in its table: keep one`);
  });

  it("name a key defined twice in an inline table", () => {
    const { path, message } = syntaxMessage("inline.toml", `[mcp_servers.echo]\ncommand = "node"\nenv = { A = "1", A = "2" }\n`);
    expect(message).toBe(`${path}:3:18: TOML syntax error: the key A is defined twice in its table: keep one`);
  });

  it("name a table defined twice", () => {
    const { path, message } = syntaxMessage("tables.toml", `[gateway]\nexpose = "meta"\n\n[ gateway ]\n`);
    expect(message).toBe(`${path}:4:2: TOML syntax error: the table [gateway] is defined twice: write each table once, with all of its keys`);
  });

  it("say that a table header is not closed", () => {
    const { path, message } = syntaxMessage("header.toml", `[gateway\nexpose = "meta"\n`);
    expect(message).toBe(`${path}:1:9: TOML syntax error: the table header [gateway is not closed: end it with ]`);
  });
});

describe("JSON syntax errors", () => {
  it("take line and column from the position V8 reports", () => {
    const text = `{\n  "mcpServers": {\n    "echo": { "command" "node" }\n  }\n}\n`;
    const { path, message } = syntaxMessage("children_config.json", text);
    expect(message).toBe(`${path}:3:25: JSON syntax error: Expected ':' after property name`);
  });

  it("refuse a comment in gaggle's own config, and point at it", () => {
    const text = `{\n  "mcpServers": {\n    "echo": { "command": "node" } // the echo\n  }\n}\n`;
    const { path, message } = syntaxMessage("children_config.json", text);
    expect(message).toBe(`${path}:3:35: JSON syntax error: JSON allows no comments: remove it`);
  });

  it("ask about a trailing comma, and point at it", () => {
    const inObject = `{\n  "mcpServers": {\n    "echo": { "command": "node", }\n  }\n}\n`;
    const object = syntaxMessage("children_config.json", inObject);
    expect(object.message).toBe(`${object.path}:3:32: JSON syntax error: trailing comma? JSON allows no comma before "}"`);
    const onItsLine = `{\n  "mcpServers": {\n    "echo": { "command": "node" },\n  }\n}\n`;
    const line = syntaxMessage("line.json", onItsLine);
    expect(line.message).toBe(`${line.path}:3:34: JSON syntax error: trailing comma? JSON allows no comma before "}"`);
    const inArray = `{"mcpServers": {"echo": {"command": "node", "args": ["a",\n]}}}`;
    const array = syntaxMessage("array.json", inArray);
    expect(array.message).toBe(`${array.path}:1:57: JSON syntax error: trailing comma? JSON allows no comma before "]"`);
  });

  it("find the spot themselves when V8 does not say, and drop V8's snippet", () => {
    const text = `{\n  "mcpServers": {\n    "echo": { "disabled": tru }\n  }\n}\n`;
    const { path, message } = syntaxMessage("nopos.json", text);
    expect(message).toBe(`${path}:3:30: JSON syntax error: Unexpected token ' '`);
  });

  it("are told, not looped on, when a stray quote leaves a string open to the end", () => {
    const description = "a server described at length ".repeat(10);
    const { message } = syntaxMessage("stray.json", `"{\n  "mcpServers": { "a": { "command": "x", "description": "${description}" } }\n}\n`);
    expect(message).toContain("JSON syntax error");
  });

  it("point past the last character on a truncated file", () => {
    const { path, message } = syntaxMessage("cut.json", `{\n  "mcpServers": {\n`);
    expect(message).toMatch(new RegExp(`^${escape(path)}:3:1: JSON syntax error: `));
  });

  it("report a stray value after the document", () => {
    const { path, message } = syntaxMessage("after.json", `{}\n{}\n`);
    expect(message).toBe(`${path}:2:1: JSON syntax error: Unexpected non-whitespace character after JSON`);
  });

  it("say when the format was guessed from content", () => {
    const { path, message } = syntaxMessage("children.conf", `{"mcpServers": {,}}`);
    expect(message).toBe(
      `${path}:1:17: JSON syntax error (format guessed from content; name the file .toml or .json): Expected property name or '}'`,
    );
  });

  it("say when a file named for one format plainly holds the other", () => {
    // Claude Desktop's JSON pasted into a .toml, and TOML written into a .json.
    const pasted = syntaxMessage("children_config.toml", `{\n  "mcpServers": {}\n}\n`);
    expect(pasted.message).toBe(`${pasted.path}:1:1: TOML syntax error (the file reads as JSON: name it .json): illegal character in key`);
    for (const text of [`[mcp_servers.a]\ncommand = "x"\n`, `# mine\n`, `[[mcp_servers]]\nname = "a"\n`]) {
      expect(syntaxMessage("children_config.json", text).message).toContain("JSON syntax error (the file reads as TOML: name it .toml): ");
    }
    // A JSON mistake in a .json file is only that.
    expect(syntaxMessage("children_config.json", `[{"a": 1}`).message).not.toContain("reads as");
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("JSONC (a client's file, as gaggle import reads it)", () => {
  it("is read as JSON whatever the file is named, when a comment comes before its object", () => {
    for (const name of ["servers.conf", "mcp.jsonc"]) {
      const path = tmp.write(name, `// my servers\n{\n  "mcpServers": { "a": { "command": "x" } }, // the one\n}\n`);
      const text = readFileSync(path, "utf8");
      expect(parseDocument(text, path, { jsonc: true })).toMatchObject({ format: "json", doc: { mcpServers: { a: { command: "x" } } } });
    }
  });
});
