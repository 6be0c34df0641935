// Owns where MCP clients keep their servers and how each client's entry reads as gaggle's: the sources `gaggle import`
// reads. Nothing here writes; a source file that does not parse is told as a problem of that file, not thrown.
import { readFileSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { ConfigError } from "./errors.js";
import { homeOf } from "./find.js";
import { type ParseOptions, parseDocument } from "./parse.js";
import { isDirectory, isFile } from "../shared/fs-checks.js";
import { isObject } from "../shared/json.js";
import { fromCodexEntry, fromEditorEntry, fromGeminiEntry, fromJsonEntry, fromVsCodeEntry } from "./client-entries.js";

/** One server as a client lists it, read as a gaggle `[mcp_servers.NAME]` entry. */
export interface FoundServer {
  name: string;
  /** The keys of gaggle's entry; unchecked here (the config's schema checks them). */
  entry: Record<string, unknown>;
  /** The client's keys gaggle has no use for or no equal of, left out. */
  dropped: string[];
  /** Why the server cannot be imported as written, if it cannot. */
  refused?: string;
  /** Why it is added with `enabled = false`: its client would not run it yet either. */
  held?: string;
  /** The `env` variables its client gives it and gaggle writes in for it: values of gaggle's, no secret of the file's. */
  given?: string[];
}

/** One file of a client's, with the servers it lists (none when it does not parse: `problem` says why). */
export interface SourceFile {
  path: string;
  /** Which of the client's scopes the file or its part is: "user", "project", "this folder". */
  scope: string;
  servers: FoundServer[];
  problem?: string;
}

export interface ClientSource {
  /** What a person types: `gaggle import claude-code`. */
  id: string;
  label: string;
  /** How a server is taken out of the client once gaggle serves it, for `name` of `scope`. */
  removal: (name: string, scope: string) => string;
  files: (where: Where) => SourceFile[];
}

/** The home, the folder the command runs in and the environment: where clients keep their files. */
export interface Where {
  home: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

/** The servers of `table` (a client's `mcpServers`-like table), each read by `read`. */
function serversOf(table: unknown, read: (raw: Record<string, unknown>) => Omit<FoundServer, "name">): FoundServer[] {
  if (!isObject(table)) return [];
  return Object.entries(table).map(([name, raw]) =>
    isObject(raw) ? { name, ...read(raw) } : { name, entry: {}, dropped: [], refused: "its entry is not a table of settings" },
  );
}

/**
 * How a file is read: as its client reads it. VS Code, Gemini CLI, Cursor and Windsurf read their files past comments
 * and trailing commas (VS Code writes them itself); Claude Code and Claude Desktop read plain JSON, and refuse a
 * comment as gaggle then does.
 */
const JSONC: ParseOptions = { jsonc: true };
const JSON_ONLY: ParseOptions = {};

/** A file's document, or the problem reading it; undefined when there is no file. */
function readDocument(path: string, syntax: ParseOptions = JSON_ONLY): { doc?: unknown; problem?: string } | undefined {
  if (!isFile(path)) return undefined;
  try {
    return { doc: parseDocument(readFileSync(path, "utf8"), path, syntax).doc };
  } catch (error) {
    if (error instanceof ConfigError && error.code === "syntax") return { problem: `${error.message}; correct it, then run gaggle import again` };
    if (error instanceof ConfigError) return { problem: error.message };
    return { problem: `cannot read ${path}: ${(error as Error).message}` };
  }
}

/** One file whose servers sit under `pick(doc)`, read by `read`: a source of one scope. */
function oneTable(
  path: string,
  scope: string,
  pick: (doc: Record<string, unknown>) => unknown,
  read = fromJsonEntry,
  syntax = JSON_ONLY,
): SourceFile[] {
  const found = readDocument(path, syntax);
  if (found === undefined) return [];
  if (found.problem !== undefined) return [{ path, scope, servers: [], problem: found.problem }];
  return [{ path, scope, servers: isObject(found.doc) ? serversOf(pick(found.doc), read) : [] }];
}

const mcpServers = (doc: Record<string, unknown>) => doc["mcpServers"];

/**
 * The folder ~/.claude.json keys a folder's own servers by, as Claude Code picks it: in a git repository the main
 * worktree's root, from a subfolder or a linked worktree alike; elsewhere the folder itself.
 */
export function claudeProjectKey(cwd: string): string {
  for (let folder = resolve(cwd); ; folder = dirname(folder)) {
    const git = join(folder, ".git");
    if (isDirectory(git)) return folder;
    if (isFile(git)) return linkedWorktreeRoot(git) ?? folder;
    if (dirname(folder) === folder) return resolve(cwd);
  }
}

/** A linked worktree's `.git` file names its git dir, whose `commondir` is the main repository's `.git`. */
function linkedWorktreeRoot(gitFile: string): string | undefined {
  try {
    const gitDir = resolve(dirname(gitFile), /^gitdir: (.+)$/m.exec(readFileSync(gitFile, "utf8"))?.[1]?.trim() ?? "");
    const common = resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim());
    return basename(common) === ".git" ? dirname(common) : undefined;
  } catch {
    return undefined;
  }
}

/** `~/.claude.json` holds the user's servers and, per folder, those added for that folder alone. */
function claudeCodeFiles({ home, cwd }: Where): SourceFile[] {
  const path = join(home, ".claude.json");
  const found = readDocument(path);
  const files: SourceFile[] = [];
  if (found?.problem !== undefined) files.push({ path, scope: "user", servers: [], problem: found.problem });
  else if (found !== undefined && isObject(found.doc)) {
    const doc = found.doc;
    files.push({ path, scope: "user", servers: serversOf(doc["mcpServers"], fromJsonEntry) });
    const projects = doc["projects"];
    const here = isObject(projects) ? projects[claudeProjectKey(cwd)] : undefined;
    if (isObject(here)) files.push({ path, scope: "local", servers: serversOf(here["mcpServers"], fromJsonEntry) });
  }
  const approvals = projectApprovals([found?.doc, ...[join(home, ".claude"), join(cwd, ".claude")].flatMap(settingsOf)], cwd);
  const project = oneTable(join(cwd, ".mcp.json"), "project", mcpServers).map((file) => ({
    ...file,
    servers: file.servers.map((server) => approvals(server)),
  }));
  return [...files, ...project].map((file) => (file.scope === "user" ? file : { ...file, servers: file.servers.map((one) => inProject(one, cwd)) }));
}

/**
 * Claude Code gives a project's stdio server (its .mcp.json's, or this folder's own in ~/.claude.json) the project's
 * root as CLAUDE_PROJECT_DIR; gaggle runs it with the same, unless its entry sets the variable itself.
 */
function inProject(server: FoundServer, cwd: string): FoundServer {
  const { command, env } = server.entry;
  if (
    server.refused !== undefined ||
    command === undefined ||
    (env !== undefined && !isObject(env)) ||
    (isObject(env) && Object.hasOwn(env, PROJECT_DIR))
  ) {
    return server;
  }
  return { ...server, entry: { ...server.entry, env: { ...env, [PROJECT_DIR]: resolve(cwd) } }, given: [PROJECT_DIR] };
}

const PROJECT_DIR = "CLAUDE_PROJECT_DIR";

/** Claude Code's settings files in `folder` (a user's ~/.claude, a project's .claude), as parsed documents. */
function settingsOf(folder: string): unknown[] {
  return ["settings.json", "settings.local.json"].map((name) => readDocument(join(folder, name))?.doc);
}

/**
 * Claude Code runs a project's .mcp.json server only once the person approved it (enableAllProjectMcpServers, or its
 * name in enabledMcpjsonServers), never one they declined (disabledMcpjsonServers): ~/.claude.json keeps the choices
 * per folder, the settings files too. A declined server is left out; one not yet approved is added disabled.
 */
function projectApprovals(docs: unknown[], cwd: string): (server: FoundServer) => FoundServer {
  const key = claudeProjectKey(cwd);
  const choices = docs.flatMap((doc) => {
    if (!isObject(doc)) return [];
    const projects = doc["projects"];
    const here = isObject(projects) ? projects[key] : undefined;
    return isObject(here) ? [doc, here] : [doc];
  });
  const names = (field: string) => new Set(choices.flatMap((choice) => (Array.isArray(choice[field]) ? choice[field].map(String) : [])));
  const all = choices.some((choice) => choice["enableAllProjectMcpServers"] === true);
  const enabled = names("enabledMcpjsonServers");
  const disabled = names("disabledMcpjsonServers");
  return (server) => {
    if (server.refused !== undefined) return server;
    if (disabled.has(server.name)) return { ...server, refused: "it was declined in Claude Code (disabledMcpjsonServers)" };
    if (all || enabled.has(server.name)) return server;
    return {
      ...server,
      entry: { ...server.entry, enabled: false },
      held: "Claude Code has not been told to run it yet; set enabled = true once you trust it",
    };
  };
}

function claudeDesktopFile({ home, env, platform }: Where): string {
  if (platform === "darwin") return join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json");
  if (platform === "win32") return join(env["APPDATA"] ?? join(home, "AppData", "Roaming"), "Claude", "claude_desktop_config.json");
  return join(configHome({ home, env }), "Claude", "claude_desktop_config.json");
}

function configHome({ home, env }: Pick<Where, "home" | "env">): string {
  const xdg = env["XDG_CONFIG_HOME"];
  return xdg !== undefined && isAbsolute(xdg) ? xdg : join(home, ".config");
}

export const CLIENT_SOURCES: readonly ClientSource[] = [
  {
    id: "claude-code",
    label: "Claude Code",
    removal: (name, scope) => `claude mcp remove ${name} --scope ${scope}`,
    files: claudeCodeFiles,
  },
  {
    id: "claude-desktop",
    label: "Claude Desktop",
    removal: () => "remove it from claude_desktop_config.json",
    files: (where) => oneTable(claudeDesktopFile(where), "user", mcpServers),
  },
  {
    id: "codex",
    label: "Codex",
    removal: (name) => `codex mcp remove ${name}`,
    files: ({ home, env }) =>
      oneTable(join(env["CODEX_HOME"] || join(home, ".codex"), "config.toml"), "user", (doc) => doc["mcp_servers"], fromCodexEntry),
  },
  {
    id: "gemini",
    label: "Gemini CLI",
    removal: (name, scope) => `gemini mcp remove ${name}${scope === "user" ? " --scope user" : ""}`,
    files: ({ home, cwd }) => [
      ...oneTable(join(home, ".gemini", "settings.json"), "user", mcpServers, fromGeminiEntry, JSONC),
      ...(resolve(cwd) === resolve(home) ? [] : oneTable(join(cwd, ".gemini", "settings.json"), "project", mcpServers, fromGeminiEntry, JSONC)),
    ],
  },
  {
    id: "cursor",
    label: "Cursor",
    removal: () => "remove it from Cursor's mcp.json",
    files: ({ home, cwd }) => [
      ...oneTable(join(home, ".cursor", "mcp.json"), "user", mcpServers, (raw) => fromEditorEntry(raw, home, undefined), JSONC),
      ...(resolve(cwd) === resolve(home)
        ? []
        : oneTable(join(cwd, ".cursor", "mcp.json"), "project", mcpServers, (raw) => fromEditorEntry(raw, home, cwd), JSONC)),
    ],
  },
  {
    id: "vscode",
    label: "VS Code",
    removal: () => "remove it from .vscode/mcp.json",
    files: ({ home, cwd }) =>
      oneTable(
        join(cwd, ".vscode", "mcp.json"),
        "project",
        (doc) => doc["servers"],
        (raw) => fromVsCodeEntry(raw, home, cwd),
        JSONC,
      ),
  },
  {
    id: "windsurf",
    label: "Windsurf",
    removal: () => "remove it from Windsurf's mcp_config.json",
    files: ({ home }) =>
      oneTable(join(home, ".codeium", "windsurf", "mcp_config.json"), "user", mcpServers, (raw) => fromEditorEntry(raw, home, undefined), JSONC),
  },
];

/**
 * A file named on the command line: a client's JSON (`mcpServers` or VS Code's `servers`, comments and trailing commas
 * allowed) or TOML (`mcp_servers`).
 */
export function fileSource(path: string): ClientSource {
  const table = (doc: Record<string, unknown>) => doc["mcpServers"] ?? doc["mcp_servers"] ?? doc["servers"];
  return {
    id: path,
    label: path,
    removal: () => `remove it from ${basename(path)}`,
    files: () => {
      const files = oneTable(path, "file", table, (raw) => (path.endsWith(".toml") ? fromCodexEntry(raw) : fromJsonEntry(raw)), JSONC);
      if (files.length > 0) return files;
      const problem = isDirectory(path) ? "a folder, not a config file: give the path of a client's .json or .toml file" : "no such file";
      return [{ path, scope: "file", servers: [], problem }];
    },
  };
}

export function whereOf(env: NodeJS.ProcessEnv, cwd: string): Where {
  return { home: homeOf(env), cwd, env, platform: process.platform };
}

/**
 * Whether an entry runs gaggle itself: the command `gaggle` or `mcp-gaggle`, the `mcp-gaggle` package (`npx
 * mcp-gaggle@1`), or this executable, linked or not. Importing it would make gaggle its own child.
 */
export function runsGaggle(entry: Record<string, unknown>, self: string): boolean {
  const command = typeof entry["command"] === "string" ? entry["command"] : "";
  if (["gaggle", "mcp-gaggle"].includes(basename(command))) return true;
  const args = Array.isArray(entry["args"]) ? entry["args"].filter((arg): arg is string => typeof arg === "string") : [];
  const own = realPath(self);
  return [command, ...args].some((word) => /^mcp-gaggle(@|$)/.test(word) || (own !== undefined && realPath(word) === own));
}

function realPath(path: string): string | undefined {
  try {
    return isAbsolute(path) ? realpathSync(path) : undefined;
  } catch {
    return undefined;
  }
}
