// `gaggle doctor [NAME...] [--json]`: starts the configured children at once and says, for each, that it works (the
// protocol revision it speaks, its tool count, how long it took to start) or why it does not and what to do; then
// what each built-in child works with. Every child it started is stopped before it returns. Exit 1 when any failed.
import { performance } from "node:perf_hooks";
import { findCommand } from "../children/processes/command-path.js";
import { McpChild } from "../children/mcp-child.js";
import { setReaperGrace } from "../children/processes/reaper.js";
import { Switchboard } from "../children/switchboard.js";
import { stateDir, type ChildConfig, type GaggleConfig } from "../config/index.js";
import { nearest } from "../shared/suggest.js";
import { checkBuiltIns, type BuiltInReport } from "../virtual/index.js";
import { diagnose } from "./diagnosis.js";
import { UsageError } from "./one-shot.js";

interface Report {
  name: string;
  ok: boolean;
  protocol?: string | null;
  tools?: number;
  start_ms?: number;
  reason?: string;
  advice?: string[];
  warnings?: string[];
  /** A built-in child's: what it works with here, or what it lacks. */
  built_in?: true;
  notes?: string[];
}

export async function runDoctor(names: string[], config: GaggleConfig, json: boolean): Promise<number> {
  const { children, builtIns } = choose(config, names);
  setReaperGrace(config.gateway.shutdownGraceMs);
  const options = { shutdownGraceMs: config.gateway.shutdownGraceMs, stateDir: stateDir(config), switchboard: new Switchboard() };
  const examined = await Promise.all(children.map((child) => examine(child, options)));
  const reports = [...examined, ...builtIns.map(({ name, ok, notes }): Report => ({ name, ok, built_in: true, notes }))];
  process.stdout.write(json ? `${JSON.stringify({ ok: reports.every((report) => report.ok), children: reports }, null, 2)}\n` : table(reports));
  return reports.every((report) => report.ok) ? 0 : 1;
}

/**
 * The children named (every enabled one when none is), configured and built in; an unknown name is a usage error
 * with a near name.
 */
function choose(config: GaggleConfig, names: string[]): { children: ChildConfig[]; builtIns: BuiltInReport[] } {
  const present = checkBuiltIns(config);
  if (names.length === 0) {
    const enabled = config.children.filter((child) => child.enabled);
    if (enabled.length === 0 && present.length === 0) throw new UsageError("no child server is enabled in the config; nothing to examine");
    return { children: enabled, builtIns: present };
  }
  const known = [...config.children.map((child) => child.name), ...present.map((report) => report.name)];
  for (const name of names) {
    if (known.includes(name)) continue;
    const guess = nearest(name, known);
    throw new UsageError(`no child server named "${name}"${guess ? `; did you mean "${guess}"?` : ""} (gaggle list shows them)`);
  }
  return {
    children: config.children.filter((child) => names.includes(child.name)),
    builtIns: present.filter((report) => names.includes(report.name)),
  };
}

async function examine(config: ChildConfig, options: ConstructorParameters<typeof McpChild>[1]): Promise<Report> {
  if (config.transport === "stdio") {
    const lookup = findCommand(config);
    if ("missing" in lookup) {
      const where = lookup.searched.length > 0 ? `on PATH (${lookup.searched.join(":")})` : "at that path";
      return {
        name: config.name,
        ok: false,
        reason: `command not found: ${lookup.missing} is not ${where}`,
        advice: [`install it, or give its full path in mcp_servers.${config.name}.command`],
      };
    }
  }
  const child = new McpChild(config, options);
  const began = performance.now();
  try {
    // Every list, not only the tools: the catalog then holds them all, and a gateway's first lists need start nothing.
    const { tools } = await child.schema();
    const status = child.status();
    const garbage = status.stdoutNoise.lines;
    return {
      name: config.name,
      ok: true,
      protocol: status.protocol,
      tools: tools.length,
      start_ms: Math.round(performance.now() - began),
      ...(garbage > 0 && {
        warnings: [`it wrote ${garbage} line(s) to stdout that are not JSON-RPC; gaggle ignores them, a stricter client may not`],
      }),
    };
  } catch (error) {
    return { name: config.name, ok: false, ...diagnose(config, error, child.status()) };
  } finally {
    await child.close().catch(() => {});
  }
}

function table(reports: Report[]): string {
  const width = Math.max(...reports.map((report) => report.name.length));
  return reports
    .map((report) => {
      const name = report.name.padEnd(width);
      const lines = report.built_in
        ? [`${name}  ${report.ok ? "ok    " : "FAILED"}  built-in`]
        : report.ok
          ? [`${name}  ok      ${report.protocol ?? "?"}  ${report.tools} tool(s)  started in ${formatMs(report.start_ms!)}`]
          : [`${name}  FAILED  ${report.reason}`];
      for (const line of [...(report.warnings ?? []), ...(report.advice ?? []), ...(report.notes ?? [])])
        lines.push(`${" ".repeat(width)}  -> ${line}`);
      return lines.join("\n");
    })
    .join("\n")
    .concat("\n");
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
