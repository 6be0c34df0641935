// Which of a child's tools are visible (and so callable) through gaggle: the `tools.allow` / `tools.deny` globs, and
// over HTTP in the 2026-07-28 era, valid `x-mcp-header` annotations.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ChildConfig } from "../config/index.js";
import type { Logger } from "../shared/log.js";
import { nearest } from "../shared/suggest.js";
import { headerParamsOf } from "./wire/param-headers.js";

/** `*` matches any run of characters, `?` one character; everything else is literal. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}

/** The visible part of a child's fetched tool list, worked out once per list fetched. */
export class VisibleTools {
  private last: { from: Tool[]; tools: Tool[]; byName: Map<string, Tool> } | undefined;

  constructor(
    private readonly visible: (name: string) => boolean,
    private readonly usable: (tool: Tool) => boolean = () => true,
    /** Told of each list fetched, once. */
    private readonly fetched: (tools: Tool[]) => void = () => {},
  ) {}

  of(tools: Tool[]): { tools: Tool[]; byName: Map<string, Tool> } {
    if (this.last?.from !== tools) {
      this.fetched(tools);
      const shown = tools.filter((tool) => this.visible(tool.name) && this.usable(tool));
      this.last = { from: tools, tools: shown, byName: new Map(shown.map((tool) => [tool.name, tool])) };
    }
    return this.last;
  }
}

/** Which of the rules leaves tool `name` out: `allow`, which names it in no glob, or `deny`, which names it; else undefined. */
export function hidingRule(rules: { allow?: string[] | undefined; deny: string[] }, name: string): "allow" | "deny" | undefined {
  if (rules.allow && !rules.allow.some((glob) => globToRegExp(glob).test(name))) return "allow";
  return rules.deny.some((glob) => globToRegExp(glob).test(name)) ? "deny" : undefined;
}

export function toolFilter(rules: { allow?: string[] | undefined; deny: string[] }): (name: string) => boolean {
  const allow = rules.allow?.map(globToRegExp);
  const deny = rules.deny.map(globToRegExp);
  return (name) => (!allow || allow.some((re) => re.test(name))) && !deny.some((re) => re.test(name));
}

/**
 * Whether a tool may be listed and called for the `x-mcp-header` annotations it carries. A client of the
 * 2026-07-28 era over HTTP must leave out a tool whose annotations break the rules, and should say why; over
 * stdio, and in the 2025 era, the annotations mean nothing. `era` is the running session's, asked when a list
 * is filtered.
 */
export function headerAnnotations(transport: string, era: () => { modern: boolean } | undefined, log: Logger): (tool: Tool) => boolean {
  return (tool) => {
    if (transport !== "http" || era()?.modern !== true) return true;
    const params = headerParamsOf(tool);
    if (typeof params === "string") log.warn({ tool: tool.name, reason: params }, "tool left out: its x-mcp-header annotations are invalid");
    return typeof params !== "string";
  };
}

/** A child's visible tools: its globs, and the annotations rule for the era its running session speaks. */
export function visibleTools(
  config: Pick<ChildConfig, "name" | "tools" | "transport">,
  era: () => { modern: boolean } | undefined,
  log: Logger,
): VisibleTools {
  return new VisibleTools(toolFilter(config.tools), headerAnnotations(config.transport, era, log), globsMatchingNone(config, log));
}

/**
 * Warns, once for each, of a `tools.allow` or `tools.deny` glob that matches none of the tools the child lists: a
 * typo in one hides a tool (allow) or shows it (deny) without a word otherwise.
 */
function globsMatchingNone(config: Pick<ChildConfig, "name" | "tools">, log: Logger): (tools: Tool[]) => void {
  const warned = new Set<string>();
  return (tools) => {
    const names = tools.map((tool) => tool.name);
    // A child that lists nothing yet may add its tools later (list_changed): nothing to hold a glob against.
    if (names.length === 0) return;
    for (const rule of ["allow", "deny"] as const) {
      for (const glob of config.tools[rule] ?? []) {
        const key = `mcp_servers.${config.name}.tools.${rule}`;
        const pattern = globToRegExp(glob);
        if (warned.has(`${rule}:${glob}`) || names.some((name) => pattern.test(name))) continue;
        warned.add(`${rule}:${glob}`);
        const guess = nearest(glob, names);
        log.warn(
          { key, glob },
          `${key} holds "${glob}", which matches none of the ${names.length} tools ${config.name} lists${guess ? `; did you mean "${guess}"?` : ""}`,
        );
      }
    }
  };
}
