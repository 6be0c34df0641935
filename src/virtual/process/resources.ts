// The process child's resources: process://list and the process://{pid}/log template.
import type { ReadResourceResult, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { readView, viewText } from "./log-view.js";
import type { ManagedProcess } from "./managed-process.js";
import type { ProcessTable } from "./process-table.js";
import { summaryView } from "./views.js";

export const LIST_URI = "process://list";

/** A log resource shows at most this many lines from the end (each end of the file is read at most 1 MB deep). */
const LOG_TAIL_LINES = 2000;

export const PROCESS_RESOURCES: Resource[] = [
  {
    uri: LIST_URI,
    name: "process list",
    description: "The background processes you may see (running first), with whether each is yours",
    mimeType: "application/json",
  },
];

export const PROCESS_RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: "process://{pid}/log",
    name: "process log",
    description: `A background process's output (stdout and stderr together); its last ${LOG_TAIL_LINES} lines when longer`,
    mimeType: "text/plain",
  },
];

const LOG_URI = /^process:\/\/(\d+)\/log$/;

/** The resource's contents, or undefined when the URI names no resource of this child. */
export async function readProcessResource(table: ProcessTable, uri: string, viewer: string): Promise<ReadResourceResult | undefined> {
  if (uri === LIST_URI) {
    const processes = table.visibleTo(viewer).map((entry) => ({ ...summaryView(entry), owned: entry.spec.owner === viewer }));
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify({ processes }) }] };
  }
  const match = LOG_URI.exec(uri);
  if (!match) return undefined;
  const entry = table.find(Number(match[1]));
  if (!entry || !table.visible(entry, viewer)) return undefined;
  return logResource(uri, entry);
}

/** The contents of `uri`, the log resource of `entry`: found in the table, and seen by its reader. */
export async function logResource(uri: string, entry: ManagedProcess): Promise<ReadResourceResult> {
  const view = await readView(() => entry.openLog(), entry.output, 0, LOG_TAIL_LINES);
  const skipped = view.omitted > 0 ? [`[... ${view.omitted} earlier lines not shown; gg_process_status with head_lines shows the start ...]`] : [];
  return { contents: [{ uri, mimeType: "text/plain", text: [...skipped, viewText(view)].join("\n") }] };
}
