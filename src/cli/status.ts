// `gaggle status [NAME] [--json] [--web]`: the live state of the config's daemon when one runs (its children with
// pid, protocol, uptime and calls, its clients, background work and config errors), read from its admin listener;
// else what a shell can know of the children without starting them: each one's transport, state and what the
// catalog of earlier runs knows of its tools. A table for a person, one JSON document with --json. It starts
// nothing; `gaggle doctor` is the command that does.
import type { Router } from "../children/router.js";
import type { GaggleConfig } from "../config/index.js";
import type { StatusDocument } from "../gateway/observe/status-document.js";
import { formatUptime, statusView } from "../gateway/meta/status-view.js";
import { GaggleError } from "../shared/errors.js";
import { stderrAdvice } from "./diagnosis.js";
import { nearest } from "../shared/suggest.js";
import { createGaggleWithListener } from "../transport/members-listener.js";
import { daemonPlace, placeOfFile, readRecord, recordsOfConfig } from "./daemon-files.js";
import { UsageError } from "./one-shot.js";

type Row = ReturnType<typeof statusView>;

/**
 * The running daemon is found by the config file's path alone, so that its state shows whether or not the file loads
 * here; `load` gives the config for the view of a config no daemon runs.
 */
export async function runStatus(names: string[], configPath: string, load: () => GaggleConfig, json: boolean, web = false): Promise<number> {
  // This shell's daemon of the file, else one another build or environment started for it (see runStop).
  const record = readRecord(placeOfFile(configPath)) ?? recordsOfConfig(configPath)[0];
  if (web) {
    if (!record?.admin_url) throw new UsageError(`no gaggle daemon with a status page runs for ${configPath}`);
    process.stdout.write(`${record.admin_url}${record.admin_token ? `#token=${record.admin_token}` : ""}\n`);
    return 0;
  }
  const live = record?.admin_url ? await liveStatus(record.admin_url, record.admin_token) : undefined;
  if (record && live) {
    const known = live.children.map((child) => child.server_id);
    for (const name of names) {
      if (known.includes(name)) continue;
      const guess = nearest(name, known);
      throw new UsageError(
        `no child server named "${name}" in the running daemon${guess ? `; did you mean "${guess}"?` : ""} (gaggle list shows them)`,
      );
    }
    const children = names.length > 0 ? live.children.filter((child) => names.includes(child.server_id)) : live.children;
    const document = {
      daemon: { pid: record.pid, socket: record.socket, admin_url: record.admin_url, log: daemonPlace(record.key).log },
      ...live,
      children,
    };
    process.stdout.write(json ? `${JSON.stringify(document, null, 2)}\n` : liveTable(document));
    return 0;
  }
  const { gaggle, members } = createGaggleWithListener(load());
  try {
    // Every row before any is printed: an unknown name prints nothing but the usage error.
    const rows = (names.length > 0 ? names : gaggle.router.names()).map((name) => row(gaggle.router, name));
    process.stdout.write(json ? `${JSON.stringify({ children: rows }, null, 2)}\n` : table(rows));
    return 0;
  } finally {
    await gaggle.close();
    await members.close();
  }
}

/** The status get_child_status gives; a child not running here counts the tools the catalog of earlier runs knows. */
function row(router: Router, name: string): Row {
  let view: Row;
  try {
    view = statusView(router.status(name));
  } catch (error) {
    if (!(error instanceof GaggleError) || error.code !== "SERVER_NOT_FOUND") throw error;
    // The router's message, with a hint in the words of the command line rather than of its meta-tools.
    const guess = nearest(name, router.names());
    throw new UsageError(`${error.message}${guess ? `; did you mean "${guess}"?` : ""} (gaggle list shows them)`);
  }
  return { ...view, tool_count: view.tool_count ?? router.get(name).known().tools?.length ?? null };
}

function table(rows: Row[]): string {
  const header = ["NAME", "TRANSPORT", "STATE", "TOOLS"];
  const cells = rows.map((row) => [
    row.server_id,
    row.transport,
    // A built-in child runs inside a gaggle: this command's own says nothing of one serving a client.
    row.transport === "virtual" ? "built in" : row.status.replace("_", " "),
    row.tool_count === null ? "?" : String(row.tool_count),
  ]);
  const errors = rows.filter((row) => row.error).map((row) => `${row.server_id}: ${row.error}`);
  return [
    ...columns(header, cells),
    ...errors,
    "",
    "This command starts no child: the tools are those earlier runs found (? where none did).",
    "gaggle doctor starts them and says what fails; gaggle schema NAME lists a child's tools.",
    "",
  ].join("\n");
}

type LiveDocument = StatusDocument & { daemon: { pid: number; socket: string; admin_url: string | null; log: string } };

/** The daemon's /api/status, with the token its record holds; undefined when the daemon does not answer. */
async function liveStatus(adminUrl: string, token: string | null): Promise<StatusDocument | undefined> {
  try {
    const response = await fetch(new URL("api/status", adminUrl), {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(LIVE_STATUS_MS),
    });
    return response.ok ? ((await response.json()) as StatusDocument) : undefined;
  } catch {
    return undefined;
  }
}

/** How long the daemon has to answer before the offline view is shown instead. */
const LIVE_STATUS_MS = 3000;

function liveTable(live: LiveDocument): string {
  const header = ["NAME", "TRANSPORT", "STATE", "PID", "UPTIME", "PROTOCOL", "CALLS", "TOOLS"];
  const cells = live.children.map((row) => [
    row.server_id,
    row.transport,
    row.status.replace("_", " "),
    row.pid === null ? "-" : String(row.pid),
    row.uptime_ms === null ? "-" : formatUptime(row.uptime_ms),
    row.protocol ?? "-",
    String(row.calls),
    row.tool_count === null ? "?" : String(row.tool_count),
  ]);
  // A child's failure, else its latest failed call, with the line of its stderr that names the cause, as doctor gives it.
  const errors = live.children.flatMap((row) => {
    const failure = row.error ?? (row.last_error && lastCallFailure(row.last_error));
    return failure ? [`${row.server_id}: ${failure}`, ...stderrAdvice(row.stderr).map((advice) => `  -> ${advice}`)] : [];
  });
  const background = live.background.map((work) => `  ${work.child} ${work.kind} ${work.id}: ${work.state} (${work.title})`);
  const clients = live.clients.map((client) => `  ${client.session}: ${client.client_name ?? "?"} ${client.client_version ?? ""}`.trimEnd());
  return [
    `gaggle daemon pid ${live.daemon.pid}, up ${formatUptime(live.gaggle.uptime_ms)}; status page ${live.daemon.admin_url}; log ${live.daemon.log}`,
    "",
    ...columns(header, cells),
    ...errors,
    "",
    `clients: ${live.clients.length}`,
    ...clients,
    `background work: ${live.background.length}`,
    ...background,
    ...(live.config_errors.length > 0 ? ["", "the config file does not load, so the daemon runs the last one that did:", ...live.config_errors] : []),
    "",
  ].join("\n");
}

/** A failed call as the status page names it: its code and time, and its message when this viewer may read it. */
function lastCallFailure({ type, message, at }: NonNullable<LiveDocument["children"][number]["last_error"]>): string {
  return `last call failed with ${type} at ${at}${message ? `: ${message}` : ""}`;
}

function columns(header: string[], cells: string[][]): string[] {
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((cell) => cell[column]!.length)));
  const line = (cell: string[]) =>
    cell
      .map((text, column) => text.padEnd(widths[column]!))
      .join("  ")
      .trimEnd();
  return [line(header), ...cells.map(line)];
}
