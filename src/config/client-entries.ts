// How each MCP client's entry for a server reads as gaggle's `[mcp_servers.NAME]` entry: the keys gaggle shares with
// it carried over, each client's own spelling of a url, a timeout, a tool filter or a variable made gaggle's.
import { basename, sep } from "node:path";
import { isObject } from "../shared/json.js";
import type { FoundServer } from "./client-configs.js";

/** Keys every client spelling `mcpServers` shares with gaggle, carried over as they are. */
const SAME_KEYS = ["command", "args", "env", "cwd", "url", "headers", "type", "transport", "disabled", "enabled", "description"] as const;

/**
 * A client's JSON entry (Claude Code and Desktop, Cursor, Windsurf, Gemini CLI, VS Code) as gaggle's: the shared keys
 * as they are, each client's own spelling of a url, a timeout or a tool filter as gaggle's key.
 */
export function fromJsonEntry(raw: Record<string, unknown>): Omit<FoundServer, "name"> {
  const entry: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if ((SAME_KEYS as readonly string[]).includes(key)) entry[key] = value;
    // Windsurf's remote url, and Gemini CLI's Streamable HTTP one.
    else if (key === "serverUrl") entry["url"] = value;
    else if (key === "httpUrl") Object.assign(entry, { url: value, type: "http" });
    // Gemini CLI: a tool call's timeout in milliseconds, and the tools shown.
    else if (key === "timeout" && typeof value === "number") entry["timeout_ms"] = value;
    else if (key === "includeTools") entry["tools"] = { ...(entry["tools"] as object), allow: value };
    else if (key === "excludeTools") entry["tools"] = { ...(entry["tools"] as object), deny: value };
    else dropped.push(key);
  }
  return { entry, dropped };
}

/** Codex's `[mcp_servers.NAME]` as gaggle's: its seconds as milliseconds, its header and token settings as headers. */
export function fromCodexEntry(raw: Record<string, unknown>): Omit<FoundServer, "name"> {
  const entry: Record<string, unknown> = {};
  const dropped: string[] = [];
  const headers: Record<string, unknown> = {};
  const seconds = (value: unknown) => (typeof value === "number" ? Math.round(value * 1000) : value);
  for (const [key, value] of Object.entries(raw)) {
    if (["command", "args", "env", "cwd", "url", "enabled", "startup_timeout_ms"].includes(key)) entry[key] = value;
    else if (key === "startup_timeout_sec") entry["startup_timeout_ms"] = seconds(value);
    else if (key === "tool_timeout_sec") entry["timeout_ms"] = seconds(value);
    else if (key === "enabled_tools") entry["tools"] = { ...(entry["tools"] as object), allow: value };
    else if (key === "disabled_tools") entry["tools"] = { ...(entry["tools"] as object), deny: value };
    else if (key === "http_headers" && isObject(value)) Object.assign(headers, value);
    else if (key === "env_http_headers" && isObject(value)) {
      for (const [header, variable] of Object.entries(value)) headers[header] = `\${${String(variable)}}`;
    } else if (key === "bearer_token_env_var" && typeof value === "string") headers["Authorization"] = `Bearer \${${value}}`;
    // The variables Codex passes on: a stdio child of gaggle's has gaggle's whole environment.
    else if (key !== "env_vars") dropped.push(key);
  }
  if (Object.keys(headers).length > 0) entry["headers"] = headers;
  return { entry, dropped };
}

/**
 * The variables VS Code, Cursor and Windsurf fill in: `${env:NAME}`, the home and the path separator have gaggle's
 * equals, and so has the workspace folder when the file is a folder's own (`folder`).
 */
function editorVariables(text: string, home: string, folder: string | undefined): string {
  const named = text
    .replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, "${$1}")
    .replaceAll("${userHome}", home)
    .replaceAll("${pathSeparator}", sep)
    .replaceAll("${/}", sep);
  return folder === undefined ? named : named.replaceAll("${workspaceFolderBasename}", basename(folder)).replaceAll("${workspaceFolder}", folder);
}

/**
 * A Cursor or Windsurf entry, its variables filled in as the editor fills them; a user's server naming the folder the
 * editor has open has no such folder in gaggle.
 */
export function fromEditorEntry(raw: Record<string, unknown>, home: string, folder: string | undefined): Omit<FoundServer, "name"> {
  const open: string[] = [];
  const rewritten = eachString(raw, (text) => {
    open.push(...(text.match(/\$\{workspaceFolder(Basename)?\}/g) ?? []));
    return editorVariables(text, home, folder);
  });
  if (folder === undefined && open.length > 0) {
    return {
      entry: {},
      dropped: [],
      refused: `it names ${open[0]}, the folder the editor has open, which gaggle has not; add it by hand with a folder`,
    };
  }
  return fromJsonEntry(rewritten as Record<string, unknown>);
}

/** VS Code's entry: its variables as the other editors', but `${input:ID}` asks a person, which gaggle cannot. */
export function fromVsCodeEntry(raw: Record<string, unknown>, home: string, folder: string): Omit<FoundServer, "name"> {
  const inputs: string[] = [];
  const rewritten = eachString(raw, (text) => {
    inputs.push(...(text.match(/\$\{input:[^}]*\}/g) ?? []));
    return editorVariables(text, home, folder);
  });
  if (inputs.length > 0) return { entry: {}, dropped: [], refused: `it asks VS Code for ${inputs[0]} when it starts; add it by hand with the value` };
  return fromJsonEntry(rewritten as Record<string, unknown>);
}

/**
 * Gemini CLI's entry: its `$NAME` is gaggle's `${NAME}`, and its `url` (without `type`) is the legacy SSE transport,
 * its Streamable HTTP one being `httpUrl`.
 */
export function fromGeminiEntry(raw: Record<string, unknown>): Omit<FoundServer, "name"> {
  const braced = eachString(raw, (text) => text.replace(/\$([A-Za-z_][A-Za-z0-9_]*)/g, "${$1}")) as Record<string, unknown>;
  const read = fromJsonEntry(braced);
  if (raw["url"] !== undefined && raw["httpUrl"] === undefined && raw["type"] === undefined) read.entry["type"] = "sse";
  return read;
}

/** `value` with `map` applied to every string in it, at any depth (keys left as they are). */
function eachString(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === "string") return map(value);
  if (Array.isArray(value)) return value.map((item) => eachString(item, map));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, eachString(item, map)]));
  return value;
}
