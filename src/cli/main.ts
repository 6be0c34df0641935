// gaggle's command line: parse arguments, load the config, hand over to a command. Nothing else lives here.
// What only some commands use (doctor, auth, HTTP serving) is imported when that command runs, so serving
// stdio neither loads nor holds it.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { isatty } from "node:tty";
import { ConfigError, LOG_LEVELS, emptyConfig, findConfigPath, loadConfig, type GaggleConfig } from "../config/index.js";
import { displayPath } from "../config/errors.js";
import { StartupError } from "../shared/errors.js";
import { setLogLevel } from "../shared/log.js";
import { configProblems } from "../gateway/gaggle.js";
import { nearest } from "../shared/suggest.js";
import { GAGGLE_VERSION } from "../shared/version.js";
import { runOneShot, UsageError, type OneShotCommand } from "./one-shot.js";
import { serveHttpUntilStopped, serveStdio } from "./serve.js";
import { parseListenAddress, portProblem } from "../shared/listen-address.js";
import { findCommand } from "../children/processes/command-path.js";
import { checkBuiltIns } from "../virtual/index.js";

const HELP = `gaggle ${GAGGLE_VERSION}: one MCP entry for every MCP server you run

Usage:
  gaggle [--config PATH]                    serve MCP over stdio: relay to the config's daemon, started if none runs
  gaggle --standalone [--config PATH]       serve MCP over stdio in this process alone (gateway.shared = false too)
  gaggle --http [HOST:]PORT [--config PATH] serve MCP over Streamable HTTP at /mcp (host default 127.0.0.1)
  gaggle validate [--config PATH]           check a config file; exit 1 and list every error if bad
  gaggle import [SOURCE...] [--dry-run]     add the servers your MCP clients list (claude-code, claude-desktop,
                                            codex, gemini, cursor, vscode, windsurf, or a file) to the config;
                                            without SOURCE, show what each client lists
  gaggle list [--config PATH]               list the child servers
  gaggle schema SERVER [TOOL]               show a child's tools, resources and prompts
  gaggle call SERVER TOOL [JSON_ARGS]       call a tool on a child
  gaggle status [SERVER] [--json]           the running daemon's children, clients and background work; without one,
                                            the children's transport, state and tools known; starts none
  gaggle status --web                       print the URL of the running daemon's status page
  gaggle doctor [SERVER...] [--json]        start the children and say, for each, that it works or why not
  gaggle stop [--config PATH]               stop the daemon of the config (its children and background work with it)
  gaggle logs [--config PATH]               print the end of the daemon's log
  gaggle auth login SERVER                  sign in to a remote child that requires OAuth (prints the URL to open)
  gaggle auth status                        show each remote child's sign-in and its expiry
  gaggle auth logout SERVER                 forget a remote child's tokens and client registration

Options:
  -c, --config PATH     config file (default: ./children_config.toml, ./children_config.json,
                        then $XDG_CONFIG_HOME/gaggle/children_config.toml and .json)
      --http ADDR       serve Streamable HTTP instead of stdio; a non-loopback HOST needs gateway.auth_token,
                        gateway.auth_tokens or GAGGLE_AUTH_TOKEN
      --json            with doctor or status: one JSON document instead of a table
  -l, --log-level LVL   fatal | error | warn | info | debug | trace | silent (logs go to stderr)
  -v, --version         print the version
  -h, --help            print this help
`;

type LogLevel = (typeof LOG_LEVELS)[number];
/** Each command and the most operands it takes. */
const OPERANDS: Record<string, number> = {
  validate: 0,
  import: Infinity,
  list: 0,
  schema: 2,
  call: 3,
  status: 1,
  doctor: Infinity,
  auth: 2,
  stop: 0,
  logs: 0,
};
const COMMANDS = Object.keys(OPERANDS);

const OPTIONS = {
  config: { type: "string", short: "c" },
  http: { type: "string" },
  "log-level": { type: "string", short: "l" },
  version: { type: "boolean", short: "v" },
  help: { type: "boolean", short: "h" },
  json: { type: "boolean" },
  standalone: { type: "boolean" },
  "dry-run": { type: "boolean" },
  web: { type: "boolean" },
  // The daemon a relay starts, with its key: not for people to type.
  daemon: { type: "string" },
} as const;

/** The options a person may type, for "did you mean": every one but the daemon's. */
const TYPED_OPTIONS = Object.keys(OPTIONS).filter((name) => name !== "daemon");

async function main(argv: string[]): Promise<number> {
  refuseUnknownOptions(argv);
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  if (values.help) return print(HELP);
  if (values.version) return print(`${GAGGLE_VERSION}\n`);
  const [command, ...operands] = positionals;
  if (command !== undefined && !COMMANDS.includes(command)) {
    if (isConfigFileName(command))
      throw new UsageError(`unknown command "${command}"; to serve that config file, give it with --config: gaggle --config ${command}`);
    const guess = nearest(command, COMMANDS);
    throw new UsageError(`unknown command "${command}"; ${guess ? `did you mean "gaggle ${guess}"? ` : ""}see gaggle --help`);
  }
  if (command !== undefined) refuseStrayOperands(command, operands);
  const level = values["log-level"];
  if (level !== undefined && !LOG_LEVELS.includes(level as LogLevel)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}; got "${level}"`);
  }

  const address = values.http === undefined ? undefined : parseListenAddress(values.http);
  if (values.http !== undefined && !address) {
    const problem = portProblem(values.http);
    throw new UsageError(`--http takes PORT, HOST:PORT or [IPV6]:PORT; got "${values.http}"${problem ? `: ${problem}` : ""}`);
  }
  if (values.json && command !== "doctor" && command !== "status") throw new UsageError(`--json goes with gaggle doctor or gaggle status`);
  if (values.web && command !== "status") throw new UsageError(`--web goes with gaggle status`);
  if (address && command !== undefined) throw new UsageError(`--http serves MCP; it does not go with "${command}"`);
  if (values.standalone && (address || command !== undefined))
    throw new UsageError(`--standalone goes with serving stdio alone (gaggle --standalone)`);

  if (values["dry-run"] && command !== "import") throw new UsageError(`--dry-run goes with gaggle import`);
  // The config to add to may not exist yet.
  if (command === "import") return (await import("./import.js")).runImport(operands, { config: values.config, dryRun: values["dry-run"] === true });

  const path = findConfigPath({ explicit: values.config, cwd: process.cwd(), env: process.env });
  if (values.config === undefined) process.stderr.write(`gaggle: using config ${path}\n`);
  // The daemon of a config is found by its file, loaded or not: a config that does not load in this shell may
  // still run, as the client that started it saw it.
  if (command === "stop") return (await import("./daemon-commands.js")).runStop(path);
  if (command === "logs") return (await import("./daemon-commands.js")).runLogs(path);
  if (command === "status") {
    setLogLevel((level as LogLevel | undefined) ?? "warn");
    const load = () => loadConfig(path, process.env);
    return (await import("./status.js")).runStatus(operands, path, load, values.json === true, values.web === true);
  }
  const serving = command === undefined;
  const { config, problem } = serving ? loadToServe(path) : { config: loadConfig(path, process.env), problem: undefined };
  // One-shot commands keep the shell quiet unless asked; the server logs at the configured level;
  // doctor reports every failure itself; its children's warnings would only repeat them.
  const quiet = command === "doctor" ? "silent" : "warn";
  setLogLevel((level as LogLevel | undefined) ?? (command === undefined ? config.gateway.logLevel : quiet));

  if (command === "validate") return validateCommand(path, config);
  if (command === "auth") return (await import("./auth.js")).runAuth(operands, config);
  if (command === "doctor") return (await import("./doctor.js")).runDoctor(operands, config, values.json === true);
  if (command !== undefined) return runOneShot(command as OneShotCommand, operands, config);
  const options = { fixedLevel: level !== undefined, problem };
  if (address) await serveHttpUntilStopped(config, address, options);
  else if (values.daemon !== undefined) await (await import("./daemon.js")).serveDaemon(config, values.daemon, options);
  else if (values.standalone || !config.gateway.shared || standaloneByEnv(process.env) || isatty(0)) await serveStdio(config, options);
  else await (await import("./relay.js")).relay(config, readFileSync(path, "utf8"), level === undefined ? [] : ["--log-level", level]);
  return -1;
}

/**
 * Settings that validate but leave a child unable to work (a process policy that refuses every command)
 * let gaggle run; here they are worth exit 1.
 */
function validateCommand(path: string, config: GaggleConfig): number {
  const problems = configProblems(config);
  if (problems.length > 0) {
    for (const problem of problems) process.stderr.write(`gaggle: ${displayPath(path)}: ${problem}\n`);
    return 1;
  }
  // A command that does not resolve is no error in the file (it may be installed later), but is worth a word.
  for (const child of config.children.filter((candidate) => candidate.enabled && candidate.transport === "stdio")) {
    const lookup = findCommand(child);
    if ("missing" in lookup) {
      const where = lookup.searched.length > 0 ? "on PATH" : "at that path";
      process.stderr.write(
        `gaggle: warning: mcp_servers.${child.name}.command: "${lookup.missing}" is not found ${where}; gaggle doctor ${child.name} says more\n`,
      );
    }
  }
  // A built-in child that lacks what it needs here (an optional module, a command) is worth a word too.
  const builtIns = checkBuiltIns(config);
  for (const builtIn of builtIns.filter((report) => !report.ok)) {
    process.stderr.write(`gaggle: warning: [virtual.${builtIn.name}]: ${builtIn.notes.join("; ")}; gaggle doctor ${builtIn.name} says more\n`);
  }
  const enabled = config.children.filter((child) => child.enabled).length;
  const names = builtIns.map((report) => report.name).join(", ");
  return print(`${path}: valid; ${config.children.length} child server(s), ${enabled} enabled; ${builtIns.length} built-in (${names || "none"})\n`);
}

/**
 * A file that is there but does not load is served anyway, as a config without children: the client connects and
 * is told why (rather than seeing only "failed to connect"), and the fixed file is applied without a reconnect.
 */
function loadToServe(path: string): { config: GaggleConfig; problem: ConfigError | undefined } {
  try {
    return { config: loadConfig(path, process.env), problem: undefined };
  } catch (error) {
    if (!(error instanceof ConfigError) || error.code === "not_found") throw error;
    process.stderr.write(`gaggle: ${error.message}\ngaggle: serving no children until the file loads\n`);
    return { config: emptyConfig(path, process.env), problem: error };
  }
}

/** GAGGLE_STANDALONE=1 (or true): every stdio gaggle of this environment runs alone, as in CI and test suites. */
function standaloneByEnv(env: NodeJS.ProcessEnv): boolean {
  const value = env.GAGGLE_STANDALONE;
  return value === "1" || value === "true";
}

/**
 * Operands past what a command takes, or a config file where a server's name goes (a name has no dot), are refused
 * rather than ignored: `gaggle validate mine.toml` would otherwise check another file.
 */
function refuseStrayOperands(command: string, operands: string[]): void {
  // A call's TOOL and JSON_ARGS may hold anything; its SERVER is a name like the others.
  // import's sources may be files of any client's.
  const file = command === "import" ? undefined : (command === "call" ? operands.slice(0, 1) : operands).find(isConfigFileName);
  if (file !== undefined) {
    throw new UsageError(`${command} takes the config file with --config: gaggle ${command} --config ${file}`);
  }
  const most = OPERANDS[command]!;
  if (operands.length <= most) return;
  const takes = most === 0 ? "takes no operand" : `takes at most ${most} operand(s)`;
  throw new UsageError(`${command} ${takes}; "${operands[most]}" is one too many; see gaggle --help`);
}

function isConfigFileName(word: string): boolean {
  return /\.(toml|json)$/i.test(word);
}

/** An option gaggle does not have is a usage error naming it and, when one is near, the option meant. */
function refuseUnknownOptions(argv: string[]): void {
  const { tokens } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS, strict: false, tokens: true });
  for (const token of tokens) {
    if (token.kind !== "option" || Object.hasOwn(OPTIONS, token.name)) continue;
    const guess = nearest(token.name, TYPED_OPTIONS);
    throw new UsageError(`unknown option "${token.rawName}"; ${guess ? `did you mean "--${guess}"? ` : ""}see gaggle --help`);
  }
}

function isParseArgsError(error: unknown): error is Error {
  return error instanceof Error && String((error as NodeJS.ErrnoException).code).startsWith("ERR_PARSE_ARGS");
}

function print(text: string): number {
  process.stdout.write(text);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError || error instanceof UsageError || error instanceof StartupError) {
      process.stderr.write(`gaggle: ${error.message}\n`);
    } else if (isParseArgsError(error)) {
      process.stderr.write(`gaggle: ${error.message}; see gaggle --help\n`);
    } else {
      process.stderr.write(`gaggle: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exitCode = error instanceof UsageError || isParseArgsError(error) ? 2 : 1;
  },
);
