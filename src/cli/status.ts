// `gaggle status [NAME] [--json]`: what a shell can know of the children without starting them: each one's
// transport, state and what the catalog of earlier runs knows of its tools. A table for a person, one JSON
// document with --json. It starts nothing; `gaggle doctor` is the command that does.
import type { GaggleConfig } from "../config/index.js";
import { MetaHandlers } from "../gateway/meta-handlers.js";
import { createGaggleWithListener } from "../transport/members-listener.js";
import { nearest } from "../shared/suggest.js";
import { UsageError } from "./one-shot.js";

interface Row {
  server_id: string;
  status: string;
  transport: string;
  tool_count: number | null;
  error: string | null;
  [key: string]: unknown;
}

export async function runStatus(names: string[], config: GaggleConfig, json: boolean): Promise<number> {
  const { gaggle, members } = createGaggleWithListener(config);
  try {
    const all = gaggle.router.names();
    for (const name of names) {
      if (all.includes(name)) continue;
      const guess = nearest(name, all);
      throw new UsageError(`no child server named "${name}"${guess ? `; did you mean "${guess}"?` : ""} (gaggle list shows them)`);
    }
    const handlers = new MetaHandlers(gaggle.router);
    const rows: Row[] = [];
    for (const name of names.length > 0 ? names : all) {
      const result = await handlers.call("get_child_status", { server_id: name }, {});
      const row = JSON.parse(result.content?.[0]?.type === "text" ? result.content[0].text : "{}") as Row;
      // Not running here: the catalog of earlier runs still knows its tools.
      const known = gaggle.router.get(name).known();
      rows.push({ ...row, tool_count: row.tool_count ?? known.tools?.length ?? null });
    }
    process.stdout.write(json ? `${JSON.stringify({ children: rows }, null, 2)}\n` : table(rows));
    return 0;
  } finally {
    await gaggle.close();
    await members.close();
  }
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
