// `gaggle import`: the servers a person's MCP clients already list, added to gaggle's config. Without a source it
// says what each client lists; with one, it adds what it can, says why it leaves out the rest, and writes the config
// only if the whole of it still loads. The clients' own files are never written.
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { stringify as toToml } from "smol-toml";
import {
  CLIENT_SOURCES,
  type ClientSource,
  type FoundServer,
  fileSource,
  runsGaggle,
  type SourceFile,
  type Where,
  whereOf,
} from "../config/client-configs.js";
import { ConfigError, displayPath, formatIssues } from "../config/errors.js";
import { configSearchPaths } from "../config/find.js";
import { checkDocument } from "../config/load.js";
import { type ParsedDocument, parseDocument } from "../config/parse.js";
import { serverNameProblem } from "../config/schema.js";
import { writeFileAtomic } from "../shared/atomic-file.js";
import { isFile } from "../shared/fs-checks.js";
import { isObject } from "../shared/json.js";
import { nearest } from "../shared/suggest.js";
import { UsageError } from "./one-shot.js";

export interface ImportOptions {
  /** `--config`: the file to add to; else the first config gaggle would read, else a new one in the user's config folder. */
  config: string | undefined;
  dryRun: boolean;
}

/** One server taken from a client's file into the config. */
interface Taken {
  source: ClientSource;
  file: SourceFile;
  server: FoundServer;
}

export function runImport(operands: string[], options: ImportOptions, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): number {
  const where = whereOf(env, cwd);
  if (operands.length === 0) return listSources(where);
  const sources = operands.map((operand) => sourceNamed(operand, cwd));
  const target = targetPath(options.config, where);
  const existing = readTarget(target, env);

  const taken: Taken[] = [];
  const lines: string[] = [];
  const names = new Set(existing.names);
  for (const source of sources) {
    for (const file of source.files(where)) {
      const from = whence(source, file);
      if (file.problem !== undefined) {
        lines.push(`${from}: not read: ${file.problem}`);
        continue;
      }
      if (file.servers.length === 0) lines.push(`${from}: no servers`);
      for (const server of file.servers) {
        const entry = inFolder(server, file, where);
        const alone = refusal({ ...server, entry }, names, taken, target, env);
        const said = typeof alone === "string" ? alone : (clash(existing, [...taken, { source, file, server: { ...server, entry } }], env) ?? alone);
        if (typeof said === "string") {
          lines.push(`${from}: left out ${server.name}: ${said}`);
          continue;
        }
        taken.push({ source, file, server: { ...server, entry } });
        const dropped = server.dropped.length > 0 ? ` (left out ${server.dropped.join(", ")}: gaggle has no equal)` : "";
        lines.push(`${from}: added ${server.name}${server.held ? `, disabled: ${server.held}` : ""}${dropped}`);
        if (said.unset.length > 0) lines.push(`  ${server.name} needs ${said.unset.join(", ")} set where gaggle runs (not set in this shell)`);
      }
    }
  }
  for (const line of lines) process.stdout.write(`${line}\n`);
  if (taken.length === 0) {
    process.stdout.write(`nothing to add to ${displayPath(target)}\n`);
    return 0;
  }

  const text = withServers(existing, taken);
  const checked = checkDocument(parsedAs(existing, text).doc, target, env);
  if (checked.invalid.length > 0) {
    // Each server was checked with the config and those before it; should the whole still not load, nothing is written.
    throw new ConfigError(target, checked.invalid, "invalid");
  }
  if (options.dryRun) {
    process.stdout.write(`\n${addedText(existing, taken).trim()}\n\n(--dry-run: ${displayPath(target)} left as it is)\n`);
    return 0;
  }
  // A value written out in a client's file (an API key, say) is no more readable in gaggle's config than it was there.
  const secret = taken.some(({ server }) => writtenOut(server.entry["env"], server.given) || writtenOut(server.entry["headers"]));
  const mode = existing.mode === undefined ? 0o600 : secret ? existing.mode & ~0o077 : existing.mode;
  // Written through a link (a config kept among dotfiles), never over it.
  writeFileAtomic(existsSync(target) ? realpathSync(target) : target, text, { mode, dirMode: 0o700 });
  process.stdout.write(`\nadded ${taken.length} server(s) to ${displayPath(target)}\n`);
  if (existing.mode !== undefined && mode !== existing.mode) {
    process.stdout.write(`${displayPath(target)} is now readable by you alone: it holds env or header values written out, not as \${VAR}\n`);
  }
  process.stdout.write(nextSteps(taken, target));
  return 0;
}

/** Whether a table of env or header values holds one written out rather than taken from a variable, or `given` by gaggle. */
function writtenOut(table: unknown, given: readonly string[] = []): boolean {
  return isObject(table) && Object.entries(table).some(([name, value]) => !fromVariable(value) && !given.includes(name));
}

/** An env or header value taken from a variable (`${VAR}`): it holds no secret of its own. */
function fromVariable(value: unknown): boolean {
  return String(value).includes("${");
}

/** Where a file's servers come from, as the person is told: the client, the file and the scope, or the file named. */
function whence(source: ClientSource, file: SourceFile): string {
  return file.scope === "file" ? displayPath(file.path) : `${source.label}, ${displayPath(file.path)} (${file.scope})`;
}

/** What each client lists, and the command that imports it. */
function listSources(where: Where): number {
  const found: string[] = [];
  for (const source of CLIENT_SOURCES) {
    const files = source.files(where);
    if (files.length === 0) continue;
    process.stdout.write(`${source.label} (gaggle import ${source.id}):\n`);
    for (const file of files) {
      const names = file.servers.map((server) => (isGaggle(server) ? `${server.name} (gaggle itself, left out)` : server.name));
      const what = file.problem ?? (names.length === 0 ? "no servers" : names.join(", "));
      process.stdout.write(`  ${displayPath(file.path)} (${file.scope}): ${what}\n`);
    }
    if (files.some((file) => file.servers.some((server) => !isGaggle(server)))) found.push(source.id);
  }
  process.stdout.write(
    found.length === 0
      ? `no MCP client lists a server to import (looked for ${CLIENT_SOURCES.map((source) => source.label).join(", ")}); gaggle import FILE reads a config file of any of them\n`
      : `add them to gaggle's config: gaggle import ${found.join(" ")} (--dry-run shows what would be added)\n`,
  );
  return 0;
}

/** An entry that runs gaggle: importing it would make gaggle its own child. */
function isGaggle(server: FoundServer): boolean {
  return runsGaggle(server.entry, process.argv[1] ?? "");
}

function sourceNamed(operand: string, cwd: string): ClientSource {
  const known = CLIENT_SOURCES.find((source) => source.id === operand);
  if (known) return known;
  if (/[/\\]|\.(json|toml)$/i.test(operand)) return fileSource(resolve(cwd, operand));
  const ids = CLIENT_SOURCES.map((source) => source.id);
  const guess = nearest(operand, ids);
  throw new UsageError(
    `unknown source "${operand}"; ${guess ? `did you mean "${guess}"? ` : ""}give one of ${ids.join(", ")}, or a config file's path`,
  );
}

/** The file given, else the config gaggle would read from here, else a new one in the user's config folder. */
function targetPath(explicit: string | undefined, where: Where): string {
  if (explicit !== undefined) return resolve(where.cwd, explicit);
  const searched = configSearchPaths(where);
  return searched.find((path) => existsSync(path)) ?? searched[CONFIG_IN_USER_FOLDER]!;
}

/** configSearchPaths lists the folder's two names, then the user config folder's: its TOML is the third. */
const CONFIG_IN_USER_FOLDER = 2;

interface Target {
  path: string;
  text: string;
  format: "toml" | "json";
  /** The parsed document, to add to when it is JSON. */
  doc: Record<string, unknown>;
  names: string[];
  /** An existing file's mode, kept. */
  mode?: number;
}

/** The config as it is: a file that does not parse, or whose settings do not load, is refused before anything is added. */
function readTarget(path: string, env: NodeJS.ProcessEnv): Target {
  if (!existsSync(path)) return { path, text: "", format: path.endsWith(".json") ? "json" : "toml", doc: {}, names: [] };
  if (!isFile(path)) throw new UsageError(`${displayPath(path)} is not a file: give --config the path of a .toml or .json config file`);
  const text = readFileSync(path, "utf8");
  const parsed = parseDocument(text, path);
  // A JSON key written twice is one the rewritten file would keep only once.
  const invalid = [...parsed.issues, ...checkDocument(parsed.doc, path, env).invalid];
  if (invalid.length > 0) {
    throw new UsageError(`the config ${displayPath(path)} does not load, so nothing is added to it:\n${formatIssues(path, invalid)}`);
  }
  const doc = isObject(parsed.doc) ? parsed.doc : {};
  const servers = doc["mcp_servers"] ?? doc["mcpServers"];
  const names = Array.isArray(servers)
    ? servers.map((entry: unknown) => (isObject(entry) ? String(entry["name"]) : ""))
    : isObject(servers)
      ? Object.keys(servers)
      : [];
  return { path, text, format: parsed.format, doc, names, mode: statSync(path).mode & 0o777 };
}

/**
 * Why `server` is left out, or the variables it needs that this shell lacks. Each is checked alone, as the config's
 * schema checks an entry, so that one bad entry leaves out only itself.
 */
function refusal(
  server: FoundServer,
  names: ReadonlySet<string>,
  taken: readonly Taken[],
  target: string,
  env: NodeJS.ProcessEnv,
): string | { unset: string[] } {
  if (server.refused !== undefined) return server.refused;
  if (isGaggle(server)) return "it runs gaggle itself";
  const problem = serverNameProblem(server.name);
  if (problem !== undefined) return `${problem}; add it by hand under another name`;
  if (names.has(server.name)) return `a server named ${server.name} is already in ${displayPath(target)}`;
  const earlier = taken.find((one) => one.server.name === server.name);
  if (earlier) return `a server of that name is added from ${earlier.source.label} already`;
  const checked = checkDocument({ mcp_servers: { [server.name]: server.entry } }, target, env);
  const prefix = `mcp_servers.${server.name}.`;
  const local = (path: string) => (path.startsWith(prefix) ? path.slice(prefix.length) : path);
  const wrong = [...checked.invalid, ...checked.unexpanded.filter((issue) => issue.unset === undefined)];
  if (wrong.length > 0) return wrong.map((issue) => `${local(issue.path)}: ${issue.message}`).join("; ");
  return { unset: [...new Set(checked.unexpanded.flatMap((issue) => issue.unset ?? []))] };
}

/**
 * Why a server that is right alone is left out: it does not load beside the config and the servers taken before it
 * (two servers exposing tools under one prefix). The config loads as it is, so what is wrong is the server's.
 */
function clash(target: Target, taken: Taken[], env: NodeJS.ProcessEnv): string | undefined {
  const checked = checkDocument(parsedAs(target, withServers(target, taken)).doc, target.path, env);
  if (checked.invalid.length === 0) return undefined;
  return checked.invalid.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
}

/** The config's text with servers added, parsed; TOML whose servers table is written inline cannot be appended to. */
function parsedAs(target: Target, text: string): ParsedDocument {
  try {
    return parseDocument(text, target.path);
  } catch (error) {
    if (!(error instanceof ConfigError) || error.code !== "syntax") throw error;
    throw new UsageError(
      `${displayPath(target.path)} writes its servers table inline (mcp_servers = { ... }), which tables appended after it cannot add to, so nothing is added: write its servers as [mcp_servers.NAME] tables, or give --config another file`,
    );
  }
}

/**
 * A stdio server of a folder's own (a project's file, a folder's entry in ~/.claude.json) runs in that folder, as its
 * client runs it: its `cwd` is of that folder, and so is a command given as a relative path (the client's system
 * finds it from the server's `cwd`); gaggle would read each from its config's folder.
 */
function inFolder(server: FoundServer, file: SourceFile, where: Where): Record<string, unknown> {
  const ofFolder = file.scope === "project" || file.scope === "local";
  const { cwd, command } = server.entry;
  if (!ofFolder || command === undefined) return server.entry;
  const folder = cwd === undefined ? where.cwd : typeof cwd === "string" && relative(cwd) ? resolve(where.cwd, cwd) : cwd;
  const relativeCommand =
    typeof command === "string" && typeof folder === "string" && isAbsolute(folder) && /[\\/]/.test(command) && relative(command);
  return { ...server.entry, cwd: folder, ...(relativeCommand && { command: resolve(folder, command) }) };
}

/** A relative path, not one the config reads as the home's (`~`) or takes from a variable (`$`). */
function relative(path: string): boolean {
  return !isAbsolute(path) && !path.startsWith("~") && !path.startsWith("$");
}

/**
 * The config's text with the servers added in the form it keeps them (a table or an array of entries, under its own
 * key): TOML appended under a comment, or the JSON written anew.
 */
function withServers(target: Target, taken: Taken[]): string {
  const key = serversKey(target);
  const listed = Array.isArray(target.doc[key]);
  const tableOf = (server: FoundServer) => (listed ? [{ name: server.name, ...server.entry }] : { [server.name]: server.entry });
  if (target.format === "json") {
    const before = target.doc[key];
    const servers = Array.isArray(before)
      ? [...before, ...taken.map(({ server }) => ({ name: server.name, ...server.entry }))]
      : { ...(isObject(before) ? before : {}), ...Object.fromEntries(taken.map(({ server }) => [server.name, server.entry])) };
    return `${JSON.stringify({ ...target.doc, [key]: servers }, null, 2)}\n`;
  }
  const parts = [target.text === "" || target.text.endsWith("\n") ? target.text : `${target.text}\n`];
  let from: SourceFile | undefined;
  for (const { source, file, server } of taken) {
    if (file !== from) parts.push(`\n# From ${source.label}: ${displayPath(file.path)}${file.scope === "file" ? "" : ` (${file.scope})`}\n`);
    from = file;
    parts.push(`${toToml({ [key]: tableOf(server) })}\n`);
  }
  return parts.join("");
}

function serversKey(target: Target): "mcp_servers" | "mcpServers" {
  if (target.doc["mcp_servers"] !== undefined) return "mcp_servers";
  return target.doc["mcpServers"] !== undefined || target.format === "json" ? "mcpServers" : "mcp_servers";
}

/**
 * What a dry run shows: the added servers alone, in the config's form, none of the config's own settings, and each
 * env or header value written out in a client's file hidden (a `${VAR}` reference is shown: it holds no secret).
 */
function addedText(target: Target, taken: Taken[]): string {
  const key = serversKey(target);
  const bare: Target = { ...target, text: "", doc: { [key]: Array.isArray(target.doc[key]) ? [] : {} } };
  const hide = (table: unknown, given: readonly string[] = []) =>
    isObject(table)
      ? Object.fromEntries(Object.entries(table).map(([name, value]) => [name, fromVariable(value) || given.includes(name) ? value : "[hidden]"]))
      : table;
  const shown = taken.map((one) => {
    const { env, headers } = one.server.entry;
    const entry = {
      ...one.server.entry,
      ...(env !== undefined && { env: hide(env, one.server.given) }),
      ...(headers !== undefined && { headers: hide(headers) }),
    };
    return { ...one, server: { ...one.server, entry } };
  });
  return withServers(bare, shown);
}

/** How to check the servers, take them out of their clients, and put gaggle there instead. */
function nextSteps(taken: Taken[], target: string): string {
  const self = `node ${realpathSync(process.argv[1] ?? "gaggle")} --config ${target}`;
  const lines = [`check them: ${self.replace(" --config", " doctor --config")}`];
  const bySource = new Map<ClientSource, Taken[]>();
  for (const one of taken) bySource.set(one.source, [...(bySource.get(one.source) ?? []), one]);
  for (const [source, ones] of bySource) {
    const removals = [...new Set(ones.map(({ server, file }) => source.removal(server.name, file.scope)))];
    lines.push(`then in ${source.label}, so that each runs once, through gaggle: ${removals.join("; ")}`);
  }
  lines.push(`and add gaggle where they were, e.g. claude mcp add --scope user gaggle -- ${self}`);
  return `${lines.join("\n")}\n`;
}
