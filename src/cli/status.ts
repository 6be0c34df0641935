// `gaggle status [NAME] [--json]`: what a shell can know of the children without starting them: each one's
// transport, state and what the catalog of earlier runs knows of its tools. A table for a person, one JSON
// document with --json. It starts nothing; `gaggle doctor` is the command that does.
import type { Router } from "../children/router.js";
import type { GaggleConfig } from "../config/index.js";
import { statusView } from "../gateway/status-view.js";
import { GaggleError } from "../shared/errors.js";
import { nearest } from "../shared/suggest.js";
import { createGaggleWithListener } from "../transport/members-listener.js";
import { UsageError } from "./one-shot.js";

type Row = ReturnType<typeof statusView>;

export async function runStatus(names: string[], config: GaggleConfig, json: boolean): Promise<number> {
  const { gaggle, members } = createGaggleWithListener(config);
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
    row.status.replace("_", " "),
    row.tool_count === null ? "?" : String(row.tool_count),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((cell) => cell[column]!.length)));
  const line = (cell: string[]) =>
    cell
      .map((text, column) => text.padEnd(widths[column]!))
      .join("  ")
      .trimEnd();
  const errors = rows.filter((row) => row.error).map((row) => `${row.server_id}: ${row.error}`);
  return [
    line(header),
    ...cells.map(line),
    ...errors,
    "",
    "This command starts no child: the tools are those earlier runs found (? where none did).",
    "gaggle doctor starts them and says what fails; gaggle schema NAME lists a child's tools.",
    "",
  ].join("\n");
}
