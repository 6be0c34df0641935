// `tools.allow` / `tools.deny` globs: which of a child's tools are visible (and so callable) through gaggle.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

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

  constructor(private readonly visible: (name: string) => boolean) {}

  of(tools: Tool[]): { tools: Tool[]; byName: Map<string, Tool> } {
    if (this.last?.from !== tools) {
      const shown = tools.filter((tool) => this.visible(tool.name));
      this.last = { from: tools, tools: shown, byName: new Map(shown.map((tool) => [tool.name, tool])) };
    }
    return this.last;
  }
}

export function toolFilter(rules: { allow?: string[] | undefined; deny: string[] }): (name: string) => boolean {
  const allow = rules.allow?.map(globToRegExp);
  const deny = rules.deny.map(globToRegExp);
  return (name) => (!allow || allow.some((re) => re.test(name))) && !deny.some((re) => re.test(name));
}
