// The config gaggle runs with in the conformance runs: one child, its tools under their own names (or behind the
// meta-tools), no built-in children.

/** `childLines` are the child's own TOML lines (command and args, or type and url). */
export function gaggleConfig(childLines, expose = "tools") {
  const virtual = ["process", "goose", "team"].flatMap((name) => [`[virtual.${name}]`, "enabled = false", ""]);
  return [
    "[gateway]",
    `expose = "${expose}"`,
    'log_level = "warn"',
    "shutdown_grace_ms = 500",
    "",
    ...virtual,
    "[mcp_servers.child]",
    'prefix = ""',
    ...childLines,
    "",
  ].join("\n");
}
